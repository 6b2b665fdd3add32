//! `log_reader`: arbitrary bytes as a JSON Lines or CBOR sequence log.

use akledger::limits::MAX_EVENT_BYTES;
use akledger::log_format::{write_item, LogFormat, LogReader};
use arbitrary::Unstructured;

/// Reads every item of `data` as a log: no panic, items bounded, offsets increasing and
/// within the input, at most one item per input byte (plus one).
fn read_all(data: &[u8], format: Option<LogFormat>) -> Vec<Result<Vec<u8>, akledger::Code>> {
    let reader = match format {
        Some(f) => LogReader::new(data, f),
        None => match LogReader::detect(data).expect("reading a slice cannot fail") {
            Ok(r) => r,
            Err(_) => return Vec::new(),
        },
    };
    let mut out = Vec::new();
    let mut last_offset = None;
    for (n, item) in reader.enumerate() {
        let item = item.expect("reading a slice cannot fail");
        assert_eq!(item.index, n, "indexes are consecutive");
        assert!(item.offset <= data.len() as u64, "offset past the input");
        if let Some(prev) = last_offset {
            assert!(item.offset > prev, "offsets must increase");
        }
        last_offset = Some(item.offset);
        if let Ok(bytes) = &item.bytes {
            assert!(bytes.len() <= MAX_EVENT_BYTES, "item over the size limit");
            assert!(bytes.len() <= data.len(), "item larger than the input");
        }
        assert!(n <= data.len(), "more items than input bytes");
        out.push(item.bytes.map_err(|e| e.code()));
    }
    out
}

/// Raw bytes through detection and both explicit formats; then, from the same bytes, a
/// list of items written in both formats must read back exactly.
pub fn check(data: &[u8]) {
    read_all(data, None);
    read_all(data, Some(LogFormat::JsonLines));
    read_all(data, Some(LogFormat::CborSeq));

    let mut u = Unstructured::new(data);
    let mut items: Vec<Vec<u8>> = Vec::new();
    while let Ok(true) = u.arbitrary::<bool>() {
        let Ok(item) = u.arbitrary::<Vec<u8>>() else {
            break;
        };
        items.push(item);
    }
    for format in [LogFormat::CborSeq, LogFormat::JsonLines] {
        let written: Vec<Vec<u8>> = match format {
            // A JSON Lines item cannot contain a newline.
            LogFormat::JsonLines => items
                .iter()
                .map(|i| i.iter().copied().filter(|b| *b != b'\n').collect())
                .collect(),
            LogFormat::CborSeq => items.clone(),
        };
        let mut log = Vec::new();
        for item in &written {
            write_item(&mut log, format, item).expect("writing to a Vec");
        }
        let back = read_all(&log, Some(format));
        // A blank JSON line and one ending in CR (CRLF endings) are framed as rejections
        // with their own message; every other item comes back as written.
        let expected: Vec<Result<Vec<u8>, akledger::Code>> = written
            .into_iter()
            .map(|i| match format {
                LogFormat::JsonLines if i.is_empty() || i.last() == Some(&b'\r') => {
                    Err(akledger::Code::SchemaViolation)
                }
                _ => Ok(i),
            })
            .collect();
        assert_eq!(back, expected, "{format:?} log does not round-trip");
    }
}
