//! `akledger audit LOG --html FILE`: the audit as one self-contained HTML page. Findings
//! come first — rejections by code, held-back events grouped by the root cause they wait
//! for, messages and controls that did not fold — then a legend, the summary (the same
//! counts as `--json`), the exchanges table with a search box and a status filter, and per
//! exchange its timeline (the same lines as `exchange --history`) with an inline SVG, one
//! lane per actor. No network and no external assets: inline CSS and SVG, one inline
//! script (the filter) allowed by its hash, and a Content Security Policy that forbids
//! loading anything.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use akledger::exchange::{ExchangeHistory, HistoryEntry, Step, Verdict};
use akledger::{EventId, NotFolded, Projection};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use super::output::{short_id, CliError};

/// The page's one script: the exchanges' search box and status filter (it hides rows and
/// timelines that do not match; without it every row shows).
const FILTER_SCRIPT: &str = "const q=document.getElementById('q'),s=document.getElementById('status');\
function f(){const t=q.value.toLowerCase(),v=s.value;\
for(const r of document.querySelectorAll('[data-x]')){\
const ok=(!t||r.dataset.x.includes(t))&&(!v||r.dataset.status===v||(v==='findings'&&r.dataset.findings==='1'));\
r.hidden=!ok;}}q.addEventListener('input',f);s.addEventListener('change',f);";

/// The page's Content Security Policy: nothing may be fetched; inline styles, data URLs,
/// and the one script whose hash it names.
pub fn csp() -> String {
    let hash = STANDARD.encode(Sha256::digest(FILTER_SCRIPT.as_bytes()));
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{hash}'"
    )
}

/// Rejection lines listed in the page at most (the count is always complete).
const MAX_REJECTION_LINES: usize = 2000;

/// Finding lists this short are shown unfolded.
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
    /// Pending events in all.
    pub pending_total: usize,
    /// Pending events grouped by the root cause they wait for: the missing event, what
    /// became of it, and the events held back by it.
    pub held_back: Vec<HeldBack>,
    /// What did not fold.
    pub not_folded: &'a [NotFolded],
    /// Every projection, by sidecar then exchange.
    pub exchanges: &'a [Projection],
    /// Every exchange's timeline.
    pub histories: &'a [ExchangeHistory],
    /// The DAG dependencies of each exchange item.
    pub dependencies: &'a HashMap<EventId, Vec<EventId>>,
}

/// Events held back by one missing event.
pub struct HeldBack {
    /// The event they ultimately wait for.
    pub root: EventId,
    /// What became of it (`never seen in this log`, `rejected at line 2 (byte 714): …`).
    pub cause: String,
    /// The pending events that wait for it.
    pub events: Vec<EventId>,
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
.legend svg{display:inline-block;vertical-align:middle;margin:0 4px 0 12px}
.filters input,.filters select{font:inherit;margin:0 12px 0 4px}
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
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        csp(),
        esc(&title),
        esc(&title)
    );
    let (class, verdict) = if r.clean {
        (
            "verdict-clean",
            "clean: nothing rejected, nothing pending".to_string(),
        )
    } else {
        (
            "verdict-findings",
            format!(
                "findings: {} rejected, {} pending, {} not folded",
                r.rejected_total,
                r.pending_total,
                r.not_folded.len()
            ),
        )
    };
    let _ = writeln!(h, "<p class=\"{class}\">{verdict}</p>");
    // Findings first: what an auditor acts on.
    if r.rejected_total > 0 {
        rejections(&mut h, r);
    }
    if r.pending_total > 0 {
        held_back(&mut h, r);
    }
    if !r.not_folded.is_empty() {
        not_folded(&mut h, r.not_folded);
    }
    legend(&mut h);
    h.push_str("<h2>Summary</h2><table>");
    for (label, n) in &r.summary {
        let _ = write!(h, "<tr><th>{label}</th><td class=\"num\">{n}</td></tr>");
    }
    h.push_str("</table>\n");
    if r.rejected_total == 0 {
        h.push_str("<h2>Rejections (0)</h2><p>None.</p>\n");
    }
    if r.not_folded.is_empty() {
        h.push_str("<h2>Not folded (0)</h2><p>None: every message and control folded.</p>\n");
    }
    exchanges_table(&mut h, r.exchanges, r.histories);
    timelines(&mut h, r);
    let _ = write!(h, "<script>{FILTER_SCRIPT}</script>\n</body></html>\n");
    h
}

/// Pending events grouped by what they ultimately wait for: one line per cause (`line 2
/// rejected → 190 events held back`), the events in a fold.
fn held_back(h: &mut String, r: &HtmlReport<'_>) {
    let _ = write!(
        h,
        "<h2>Held back ({} pending events, {} causes)</h2><table><tr><th>waits for</th><th>which was</th><th>events held back</th></tr>",
        r.pending_total,
        r.held_back.len()
    );
    for group in &r.held_back {
        let open = if group.events.len() <= OPEN_REJECTION_LINES {
            " open"
        } else {
            ""
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td><details{open}><summary>{} events</summary><ul class=\"lines\">",
            short(&group.root.to_string()),
            esc(&group.cause),
            group.events.len()
        );
        for id in &group.events {
            let _ = write!(h, "<li>{}</li>", esc(&id.to_string()));
        }
        h.push_str("</ul></details></td></tr>");
    }
    h.push_str("</table>\n");
}

/// Messages and controls that did not fold, with the fold's reason.
fn not_folded(h: &mut String, items: &[NotFolded]) {
    let open = if items.len() <= OPEN_REJECTION_LINES {
        " open"
    } else {
        ""
    };
    let _ = write!(
        h,
        "<h2>Not folded ({})</h2><details{open}><summary>every message or control the fold set aside, with why</summary><table><tr><th>event</th><th>exchange</th><th>reason</th></tr>",
        items.len()
    );
    for n in items {
        let exchange = n.exchange_id.as_ref().map_or("", |x| x.as_str());
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"ignored\">{}</td></tr>",
            short(&n.event_id.to_string()),
            esc(exchange),
            esc(n.reason.as_str())
        );
    }
    h.push_str("</table></details>\n");
}

/// What the colours and shapes mean.
fn legend(h: &mut String) {
    h.push_str("<h2>Legend</h2><p class=\"legend\">");
    for (v, what) in [
        (Verdict::Folded, "folded into the exchange"),
        (Verdict::Applied, "a control applied (reassignment)"),
        (Verdict::Terminal, "the control that ended the exchange"),
    ] {
        let _ = write!(
            h,
            "<svg width=\"18\" height=\"18\"><circle cx=\"9\" cy=\"9\" r=\"7\" fill=\"{}\"/></svg>{what} ",
            verdict_color(&v)
        );
    }
    let ignored = Verdict::Ignored {
        reason: akledger::exchange::Reason::NotAddressed,
        beaten_by: Vec::new(),
    };
    let _ = writeln!(
        h,
        "<svg width=\"18\" height=\"18\"><circle cx=\"9\" cy=\"9\" r=\"6\" fill=\"{}\" {IGNORED_STROKE}/></svg>ignored by the fold (see Not folded) \
         <svg width=\"18\" height=\"18\"><rect x=\"2\" y=\"2\" width=\"14\" height=\"14\" fill=\"#6e7781\"/></svg>a control (its action beneath) \
         <svg width=\"18\" height=\"18\"><circle cx=\"9\" cy=\"9\" r=\"7\" fill=\"#6e7781\"/></svg>a message (its PNCP kind or role beneath). \
         In a timeline each lane is one actor, the controller first; lines are causal references.</p>",
        verdict_color(&ignored)
    );
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

fn exchanges_table(h: &mut String, exchanges: &[Projection], histories: &[ExchangeHistory]) {
    let _ = write!(h, "<h2>Exchanges ({})</h2>", exchanges.len());
    if exchanges.is_empty() {
        h.push_str("<p>None folded (no sidecar, or no key: pass <code>--keyring</code>).</p>\n");
        return;
    }
    h.push_str(
        "<p class=\"filters\"><label>search <input id=\"q\" type=\"search\" placeholder=\"exchange, sidecar or agent\"></label> \
         <label>status <select id=\"status\"><option value=\"\">any</option><option value=\"findings\">with ignored items</option>\
         <option>complete</option><option>failed</option><option>responding</option><option>delivered</option></select></label> \
         (filters the table and the timelines)</p>",
    );
    let findings: std::collections::HashSet<(String, &str)> = histories
        .iter()
        .filter(|x| has_ignored(x))
        .map(|x| (x.sidecar_id.to_string(), x.exchange_id.as_str()))
        .collect();
    h.push_str("<table><tr><th>exchange</th><th>sidecar</th><th>status</th><th>responses</th><th>coordinator</th><th>failure</th></tr>");
    for p in exchanges {
        let status = p.status.as_str();
        let sidecar = p.sidecar_id.to_string();
        let flagged = findings.contains(&(sidecar.clone(), p.exchange_id.as_str()));
        let _ = write!(
            h,
            "<tr {}><td class=\"mono\"><a href=\"#{}\">{}</a>{}</td><td>{}</td><td><span class=\"badge {status}\">{status}</span></td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            filter_attrs(p.exchange_id.as_str(), &sidecar, p.coordinator_agent_id.as_str(), status, flagged),
            anchor(&sidecar, p.exchange_id.as_str()),
            esc(p.exchange_id.as_str()),
            if flagged { " <span class=\"ignored\">(ignored items)</span>" } else { "" },
            short(&sidecar),
            p.user_facing_response_event_ids.len(),
            short(p.coordinator_agent_id.as_str()),
            esc(p.failure_reason_code.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table>\n");
}

/// Whether the fold ignored any item of the exchange.
fn has_ignored(x: &ExchangeHistory) -> bool {
    x.entries
        .iter()
        .any(|e| matches!(e.verdict, Verdict::Ignored { .. }))
}

/// The attributes the filter script reads: the searchable text, the status, and whether
/// the exchange has ignored items.
fn filter_attrs(
    exchange: &str,
    sidecar: &str,
    coordinator: &str,
    status: &str,
    flagged: bool,
) -> String {
    format!(
        "data-x=\"{}\" data-status=\"{status}\" data-findings=\"{}\"",
        esc(&format!("{exchange} {sidecar} {coordinator}").to_lowercase()),
        u8::from(flagged)
    )
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
        let sidecar = x.sidecar_id.to_string();
        let coordinator = x
            .projection
            .as_ref()
            .map_or(String::new(), |p| p.coordinator_agent_id.to_string());
        let flagged = has_ignored(x);
        let _ = write!(
            h,
            "<details id=\"{}\" {}{}><summary><span class=\"mono\">{}</span> <span class=\"badge {status}\">{status}</span> {} events{}</summary>",
            anchor(&sidecar, x.exchange_id.as_str()),
            filter_attrs(x.exchange_id.as_str(), &sidecar, &coordinator, status, flagged),
            if n < OPEN_TIMELINES { " open" } else { "" },
            esc(x.exchange_id.as_str()),
            x.entries.len(),
            if flagged { " <span class=\"ignored\">(ignored items)</span>" } else { "" }
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

/// How an ignored item stands out: a red dashed ring.
const IGNORED_STROKE: &str = "stroke=\"#cf222e\" stroke-width=\"3\" stroke-dasharray=\"3 2\"";
const STEP_X: usize = 72;
const LEFT: usize = 150;
const LANE_Y: usize = 42;

/// The short label under an item: a control's action, a message's PNCP kind or role.
fn label(e: &HistoryEntry) -> String {
    match (&e.step, &e.pncp) {
        (Step::Control(_), _) => e.step.action().unwrap_or("control").replace('_', " "),
        (_, Some(p)) => p.kind.as_str().to_string(),
        (step, None) => step.role().to_string(),
    }
}

/// An inline SVG of the exchange's events: one column per item in time order, one lane
/// per actor (the controller first, then in order of appearance), messages as circles and
/// controls as squares coloured by outcome, ignored items ringed in red, each labelled
/// with its action or kind, and lines for DAG dependencies among them.
fn svg(h: &mut String, entries: &[HistoryEntry], deps: &HashMap<EventId, Vec<EventId>>) {
    let mut actors: Vec<(&str, bool)> = Vec::new();
    for e in entries.iter().filter(|e| e.by_controller) {
        if !actors.iter().any(|(a, _)| *a == e.author.as_str()) {
            actors.push((e.author.as_str(), true));
        }
    }
    for e in entries {
        if !actors.iter().any(|(a, _)| *a == e.author.as_str()) {
            actors.push((e.author.as_str(), e.by_controller));
        }
    }
    let lane_of = |author: &str| actors.iter().position(|(a, _)| *a == author).unwrap_or(0);
    let width = LEFT + STEP_X * entries.len().max(1);
    let height = LANE_Y * actors.len().max(1) + 16;
    let at: HashMap<EventId, (usize, usize)> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                e.event_id,
                (
                    LEFT + STEP_X * i + STEP_X / 2,
                    18 + LANE_Y * lane_of(e.author.as_str()),
                ),
            )
        })
        .collect();
    let _ = write!(
        h,
        "<svg width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"events of the exchange, one lane per actor\">"
    );
    for (i, (actor, controller)) in actors.iter().enumerate() {
        let y = 18 + LANE_Y * i;
        let name = format!(
            "{}{}",
            short_id(actor),
            if *controller { " (controller)" } else { "" }
        );
        let _ = write!(
            h,
            "<text x=\"4\" y=\"{}\" font-size=\"11\" fill=\"#57606a\"><title>{}</title>{}</text><line x1=\"{LEFT}\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"#eaeef2\"/>",
            y + 4,
            esc(actor),
            esc(&name)
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
        let ring = match e.verdict {
            Verdict::Ignored { .. } => IGNORED_STROKE,
            _ => "",
        };
        let title = esc(&format!(
            "{} {}: {}",
            e.event_id,
            e.describe(),
            e.verdict.text()
        ));
        if matches!(e.step, Step::Control(_)) {
            let _ = write!(
                h,
                "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"16\" fill=\"{color}\" {ring}><title>{title}</title></rect>",
                x - 8,
                y - 8
            );
        } else {
            let _ = write!(
                h,
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"8\" fill=\"{color}\" {ring}><title>{title}</title></circle>"
            );
        }
        let _ = write!(
            h,
            "<text x=\"{x}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#1f2328\">{}</text>",
            y + 20,
            esc(&label(e))
        );
    }
    h.push_str("</svg>");
}
