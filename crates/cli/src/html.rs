//! `akledger audit LOG --html FILE`: the audit as one self-contained HTML page — summary,
//! rejections, pending events, the exchanges table with status colours, and per exchange
//! its timeline (the same lines as `exchange --history`) with an inline SVG of its events.
//! No network and no external assets: inline CSS and SVG only, and a Content Security
//! Policy that forbids loading anything.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use akledger::exchange::{ExchangeHistory, HistoryEntry, Step, Verdict};
use akledger::{EventId, Projection};

use super::output::{short_id, CliError};

/// The page's Content Security Policy: nothing may be fetched; inline styles and data
/// URLs only.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// Rejection lines listed in the page at most (the count is always complete).
const MAX_REJECTION_LINES: usize = 2000;

/// Rejection lists this short are shown unfolded.
const OPEN_REJECTION_LINES: usize = 20;

/// Timelines shown unfolded at the top of their section (the rest open on a click).
const OPEN_TIMELINES: usize = 3;

/// Everything the page shows.
pub struct HtmlReport<'a> {
    /// The audited log, as named on the command line.
    pub log_name: String,
    /// `(label, count)` rows of the summary.
    pub summary: Vec<(&'static str, usize)>,
    /// True when nothing was rejected or left pending.
    pub clean: bool,
    /// Rejection lines (`line 500 (byte 776992): id code message`), in log order.
    pub rejections: Vec<String>,
    /// How many rejections there are in all.
    pub rejected_total: usize,
    /// Rejections by PROFILE code.
    pub rejected_by_code: Vec<(String, usize)>,
    /// Pending lines (the event and what it waits for).
    pub pending: Vec<String>,
    /// Every projection, by sidecar then exchange.
    pub exchanges: &'a [Projection],
    /// Every exchange's timeline.
    pub histories: &'a [ExchangeHistory],
    /// The DAG dependencies of each exchange item.
    pub dependencies: &'a HashMap<EventId, Vec<EventId>>,
}

/// Whether the page may list one more rejection line.
pub fn wants_rejection(listed: usize) -> bool {
    listed < MAX_REJECTION_LINES
}

/// `&`, `<`, `>`, `"` and `'` escaped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An id shortened for a table cell, the full id in its title.
fn short(id: &str) -> String {
    format!(
        "<span class=\"id\" title=\"{}\">{}</span>",
        esc(id),
        esc(&short_id(id))
    )
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} .num{text-align:right}
.id,code,.mono{font-family:ui-monospace,monospace;font-size:12px} td.mono{white-space:nowrap}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;color:#fff}
.complete{background:#1a7f37} .failed{background:#cf222e} .responding{background:#0969da} .delivered{background:#6e7781}
.verdict-clean{color:#1a7f37;font-weight:600} .verdict-findings{color:#cf222e;font-weight:600}
.terminal{color:#1a7f37} .applied{color:#0969da} .ignored{color:#bc4c00} .folded{color:#1f2328}
ul.lines{font-family:ui-monospace,monospace;font-size:12px;padding-left:18px}
details{margin:6px 0;border:1px solid #d0d7de;border-radius:6px;padding:4px 10px}
summary{cursor:pointer} svg{display:block;margin:8px 0}
";

/// Writes the page to `path`.
pub fn write(path: &Path, report: &HtmlReport<'_>) -> Result<(), CliError> {
    let page = page(report);
    let mut file = std::fs::File::create(path).map_err(|e| CliError::Io(path.to_owned(), e))?;
    file.write_all(page.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| CliError::Io(path.to_owned(), e))
}

fn page(r: &HtmlReport<'_>) -> String {
    let mut h = String::new();
    let title = format!("akledger audit of {}", r.log_name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let (class, verdict) = if r.clean {
        ("verdict-clean", "clean: nothing rejected, nothing pending")
    } else {
        ("verdict-findings", "findings: rejected or pending events")
    };
    let _ = write!(
        h,
        "<p class=\"{class}\">{verdict}</p>\n<h2>Summary</h2><table>"
    );
    for (label, n) in &r.summary {
        let _ = write!(h, "<tr><th>{label}</th><td class=\"num\">{n}</td></tr>");
    }
    h.push_str("</table>\n");
    rejections(&mut h, r);
    if !r.pending.is_empty() {
        let _ = write!(
            h,
            "<h2>Pending ({})</h2><ul class=\"lines\">",
            r.pending.len()
        );
        for line in &r.pending {
            let _ = write!(h, "<li>{}</li>", esc(line));
        }
        h.push_str("</ul>\n");
    }
    exchanges_table(&mut h, r.exchanges);
    timelines(&mut h, r);
    h.push_str("</body></html>\n");
    h
}

fn rejections(h: &mut String, r: &HtmlReport<'_>) {
    let _ = write!(h, "<h2>Rejections ({})</h2>", r.rejected_total);
    if r.rejections.is_empty() {
        h.push_str("<p>None.</p>\n");
        return;
    }
    h.push_str("<table><tr><th>code</th><th>events</th></tr>");
    for (code, n) in &r.rejected_by_code {
        let _ = write!(
            h,
            "<tr><td class=\"mono\">{}</td><td class=\"num\">{n}</td></tr>",
            esc(code)
        );
    }
    let open = if r.rejections.len() <= OPEN_REJECTION_LINES {
        " open"
    } else {
        ""
    };
    let _ = write!(
        h,
        "</table><details{open}><summary>every rejected item, by position in the log</summary><ul class=\"lines\">"
    );
    for line in &r.rejections {
        let _ = write!(h, "<li>{}</li>", esc(line));
    }
    h.push_str("</ul>");
    if r.rejected_total > r.rejections.len() {
        let _ = write!(
            h,
            "<p>… and {} more (see <code>akledger audit --json</code>).</p>",
            r.rejected_total - r.rejections.len()
        );
    }
    h.push_str("</details>\n");
}

fn exchanges_table(h: &mut String, exchanges: &[Projection]) {
    let _ = write!(h, "<h2>Exchanges ({})</h2>", exchanges.len());
    if exchanges.is_empty() {
        h.push_str("<p>None folded (no sidecar, or no key: pass <code>--keyring</code>).</p>\n");
        return;
    }
    h.push_str("<table><tr><th>exchange</th><th>sidecar</th><th>status</th><th>responses</th><th>coordinator</th><th>failure</th></tr>");
    for p in exchanges {
        let status = p.status.as_str();
        let _ = write!(
            h,
            "<tr><td class=\"mono\"><a href=\"#{}\">{}</a></td><td>{}</td><td><span class=\"badge {status}\">{status}</span></td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            anchor(&p.sidecar_id.to_string(), p.exchange_id.as_str()),
            esc(p.exchange_id.as_str()),
            short(&p.sidecar_id.to_string()),
            p.user_facing_response_event_ids.len(),
            short(p.coordinator_agent_id.as_str()),
            esc(p.failure_reason_code.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
}

/// An in-page anchor for an exchange (letters, digits and `-` only).
fn anchor(sidecar: &str, exchange: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    };
    format!("x-{}-{}", clean(sidecar), clean(exchange))
}

fn timelines(h: &mut String, r: &HtmlReport<'_>) {
    if r.histories.is_empty() {
        return;
    }
    h.push_str("<h2>Timelines</h2>\n");
    for (n, x) in r.histories.iter().enumerate() {
        let status = x
            .projection
            .as_ref()
            .map_or("no canonical request", |p| p.status.as_str());
        let _ = write!(
            h,
            "<details id=\"{}\"{}><summary><span class=\"mono\">{}</span> <span class=\"badge {status}\">{status}</span> {} events</summary>",
            anchor(&x.sidecar_id.to_string(), x.exchange_id.as_str()),
            if n < OPEN_TIMELINES { " open" } else { "" },
            esc(x.exchange_id.as_str()),
            x.entries.len()
        );
        svg(h, &x.entries, r.dependencies);
        h.push_str("<table><tr><th>time</th><th>event</th><th>author</th><th>what</th><th>outcome</th></tr>");
        for e in &x.entries {
            let who = if e.by_controller {
                format!("{} (controller)", short(e.author.as_str()))
            } else {
                short(e.author.as_str())
            };
            let _ = write!(
                h,
                "<tr><td class=\"mono\">{}</td><td>{}</td><td>{who}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
                e.created_at,
                short(&e.event_id.to_string()),
                esc(&e.describe()),
                e.verdict.as_str(),
                esc(&e.verdict.text())
            );
        }
        h.push_str("</table></details>\n");
    }
}

/// The lane of an item in the picture.
fn lane(step: &Step) -> usize {
    match step {
        Step::Request => 0,
        Step::Internal => 1,
        Step::Response { .. } => 2,
        Step::Control(_) => 3,
    }
}

/// The colour of an exchange item by the fold's verdict, in the page's pictures and in
/// `dag --dot`.
pub fn verdict_color(v: &Verdict) -> &'static str {
    match v {
        Verdict::Folded => "#0969da",
        Verdict::Applied => "#54aeff",
        Verdict::Terminal => "#2da44e",
        Verdict::Ignored { .. } => "#fb8f44",
    }
}

const LANES: [&str; 4] = ["request", "internal", "response", "control"];
const STEP_X: usize = 64;
const LEFT: usize = 80;
const LANE_Y: usize = 30;

/// An inline SVG of the exchange's events: one column per item in time order, one lane
/// per role, controls as squares, coloured by outcome, edges for DAG dependencies among
/// them.
fn svg(h: &mut String, entries: &[HistoryEntry], deps: &HashMap<EventId, Vec<EventId>>) {
    let width = LEFT + STEP_X * entries.len().max(1);
    let height = LANE_Y * LANES.len() + 10;
    let at: HashMap<EventId, (usize, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                e.event_id,
                (LEFT + STEP_X * i + STEP_X / 2, 20 + LANE_Y * lane(&e.step)),
            )
        })
        .collect();
    let _ = write!(
        h,
        "<svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"events of the exchange\">"
    );
    for (i, name) in LANES.iter().enumerate() {
        let y = 20 + LANE_Y * i;
        let _ = write!(
            h,
            "<text x=\"4\" y=\"{}\" font-size=\"11\" fill=\"#57606a\">{name}</text><line x1=\"{LEFT}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#eaeef2\"/>",
            y + 4
        );
    }
    for e in entries {
        let Some((x2, y2)) = at.get(&e.event_id) else {
            continue;
        };
        for d in deps.get(&e.event_id).into_iter().flatten() {
            if let Some((x1, y1)) = at.get(d) {
                let _ = write!(
                    h,
                    "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"#8c959f\" stroke-width=\"1.2\"/>"
                );
            }
        }
    }
    for e in entries {
        let Some((x, y)) = at.get(&e.event_id) else {
            continue;
        };
        let color = verdict_color(&e.verdict);
        let title = esc(&format!(
            "{} {}: {}",
            e.event_id,
            e.describe(),
            e.verdict.text()
        ));
        if matches!(e.step, Step::Control(_)) {
            let _ = write!(
                h,
                "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"16\" fill=\"{color}\"><title>{title}</title></rect>",
                x - 8,
                y - 8
            );
        } else {
            let _ = write!(
                h,
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"8\" fill=\"{color}\"><title>{title}</title></circle>"
            );
        }
    }
    h.push_str("</svg>");
}
