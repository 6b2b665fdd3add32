//! `akledger dag --dot [--since ID…] [--exchange X] [--max-nodes N]`: the causal DAG as
//! Graphviz DOT. One node per admitted event (heads drawn with a double border), pending
//! events dashed, the events they miss dotted (never seen) or red (rejected when
//! released), exchange items filled by what the fold made of them (controls named by their
//! action, ignored items orange with a red dashed border); one edge per DAG dependency
//! (PROFILE §5), drawn from the dependency to the event that names it. A graph of more
//! than `--max-nodes` nodes is drawn per writer instead (one node per actor with its event
//! count, edges counting the dependencies between them), with a hint saying how to draw
//! the events.

use clap::Args;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use akledger::exchange::{ExchangeHistory, Step, Verdict};
use akledger::{Event, EventId, Ledger};

use super::history::resolve_sidecar;
use super::html::verdict_color;
use super::output::{print_lines, resolve_ids, short_id, CliError, LedgerArgs, Outcome};

/// Event nodes drawn at most by default: Graphviz lays out a few hundred in a second;
/// the demo's 1,120 took 40 s and made a 5361×27390 px picture nobody can read.
const MAX_DOT_NODES: usize = 300;

/// Writers drawn one by one in the summary at most; the rest share one node.
const MAX_SUMMARY_WRITERS: usize = 40;

/// What a node is.
enum Node {
    /// Admitted; `head` when nothing covers it.
    Admitted { event: Event, head: bool },
    /// Stored, waiting for its dependencies.
    Pending(Event),
    /// Named by a pending event, never seen.
    Missing,
    /// Pending once, rejected when its dependencies arrived (with the code).
    Rejected(String),
}

/// Draw the causal DAG as Graphviz DOT (`akledger dag --dot | dot -Tsvg > dag.svg`).
///
/// One node per admitted event (heads with a double border), pending events dashed,
/// the events they miss dotted (never seen) or as red octagons (rejected on release),
/// exchange controls filled by outcome (green terminal, blue applied, orange ignored,
/// with the reason); edges run from a dependency to the event naming it.
///
/// A graph of more than --max-nodes events (default 300) is drawn per writer instead,
/// with a hint on stderr and in the DOT: Graphviz takes minutes and draws an unreadable
/// picture for thousands of nodes.
///
/// Example: akledger dag --dot --exchange exchange-00000001-00000003 | dot -Tsvg > x.svg
#[derive(Args, Debug)]
pub struct DagArgs {
    /// Write Graphviz DOT (the only format).
    #[arg(long, required = true)]
    pub dot: bool,
    /// Leave out every event this id covers (repeat, or separate with commas).
    #[arg(
        long,
        value_name = "ID",
        value_delimiter = ',',
        conflicts_with = "exchange"
    )]
    pub since: Vec<String>,
    /// Only this exchange's events (request, messages, controls).
    #[arg(long, value_name = "X")]
    pub exchange: Option<String>,
    /// The exchange's sidecar [default: the ledger's only sidecar].
    #[arg(long, value_name = "ID", requires = "exchange")]
    pub sidecar: Option<String>,
    /// Draw at most this many event nodes; a larger graph is drawn per writer.
    #[arg(long, value_name = "N", default_value_t = MAX_DOT_NODES)]
    pub max_nodes: usize,
    #[command(flatten)]
    pub ledger: LedgerArgs,
}

/// Runs the command.
pub fn run(args: DagArgs) -> Result<Outcome, CliError> {
    let ledger = &args.ledger;
    let ledger = ledger.open()?;
    let histories = match args.exchange.as_deref() {
        Some(x) => {
            let sidecar = resolve_sidecar(&ledger, args.sidecar.as_deref())?;
            let history = ledger
                .exchange_history(&sidecar, &super::output::exchange_arg(x)?)?
                .ok_or_else(|| {
                    CliError::Usage(format!("{x}: no admitted event of {sidecar} names it"))
                })?;
            vec![history]
        }
        None => all_histories(&ledger)?,
    };
    let nodes = nodes(&ledger, &args, &histories)?;
    if nodes.len() > args.max_nodes {
        let hint = format!(
            "{} events are more than --max-nodes {}: drawn per writer; draw events with --exchange X, --since ID or a larger --max-nodes",
            nodes.len(),
            args.max_nodes
        );
        eprintln!("akledger: dag: {hint}");
        print_lines([per_writer(&nodes, &hint)])?;
        return Ok(Outcome::Clean);
    }
    print_lines([dot(&nodes, &verdicts(&histories))])?;
    Ok(Outcome::Clean)
}

/// Every exchange's history, every sidecar.
pub fn all_histories(ledger: &Ledger) -> Result<Vec<ExchangeHistory>, CliError> {
    let mut out = Vec::new();
    for sidecar in ledger.sidecars() {
        for x in ledger.exchange_ids(&sidecar)? {
            out.extend(ledger.exchange_history(&sidecar, &x)?);
        }
    }
    Ok(out)
}

/// What each exchange item is (`control close`, `response Response orders/place`) and what
/// the fold made of it, from `histories`.
fn verdicts(histories: &[ExchangeHistory]) -> HashMap<EventId, (Step, String, Verdict)> {
    histories
        .iter()
        .flat_map(|h| &h.entries)
        .map(|e| {
            (
                e.event_id,
                (e.step.clone(), e.describe(), e.verdict.clone()),
            )
        })
        .collect()
}

/// The graph per writer: one node per actor (its events, pending ones counted apart) and
/// one edge per pair of actors whose events depend on each other, with the count; at most
/// [`MAX_SUMMARY_WRITERS`] actors, the rest as one node.
fn per_writer(nodes: &BTreeMap<EventId, Node>, hint: &str) -> String {
    let writer_of = |node: &Node| match node {
        Node::Admitted { event, .. } | Node::Pending(event) => {
            Some(event.actor().principal().to_string())
        }
        _ => None,
    };
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for node in nodes.values() {
        if let Some(w) = writer_of(node) {
            let entry = counts.entry(w).or_default();
            match node {
                Node::Pending(_) => entry.1 += 1,
                _ => entry.0 += 1,
            }
        }
    }
    let mut ranked: Vec<(&String, &(usize, usize))> = counts.iter().collect();
    ranked.sort_by(|a, b| (b.1 .0 + b.1 .1).cmp(&(a.1 .0 + a.1 .1)).then(a.0.cmp(b.0)));
    let shown: HashSet<&String> = ranked
        .iter()
        .take(MAX_SUMMARY_WRITERS)
        .map(|(w, _)| *w)
        .collect();
    let others = "other writers".to_string();
    let group = |w: String| {
        if shown.contains(&w) {
            w
        } else {
            others.clone()
        }
    };
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for node in nodes.values() {
        let (Some(to), Node::Admitted { event, .. } | Node::Pending(event)) =
            (writer_of(node), node)
        else {
            continue;
        };
        for dep in event.dependencies() {
            if let Some(from) = nodes.get(dep).and_then(writer_of) {
                let key = (group(from), group(to.clone()));
                if key.0 != key.1 {
                    *edges.entry(key).or_default() += 1;
                }
            }
        }
    }
    let mut out = format!(
        "// akledger causal DAG per writer: {hint}.\n\
         // One node per actor (its admitted and pending events); edges count the dependencies\n\
         // from one actor's events to another's.\n\
         digraph akledger {{\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n"
    );
    let mut rest = (0usize, 0usize, 0usize);
    for (w, (admitted, pending)) in &ranked {
        if shown.contains(w) {
            let _ = writeln!(
                out,
                "  \"{w}\" [label=\"{}\\n{admitted} events{}\"];",
                short_id(w),
                if *pending > 0 {
                    format!("\\n{pending} pending")
                } else {
                    String::new()
                }
            );
        } else {
            rest = (rest.0 + 1, rest.1 + admitted, rest.2 + pending);
        }
    }
    if rest.0 > 0 {
        let _ = writeln!(
            out,
            "  \"{others}\" [label=\"{} other writers\\n{} events, {} pending\", style=\"rounded,dashed\"];",
            rest.0, rest.1, rest.2
        );
    }
    for ((from, to), n) in edges {
        let _ = writeln!(out, "  \"{from}\" -> \"{to}\" [label=\"{n}\"];");
    }
    out.push('}');
    out
}

/// The nodes to draw, in canonical order of id.
fn nodes(
    ledger: &Ledger,
    args: &DagArgs,
    histories: &[ExchangeHistory],
) -> Result<BTreeMap<EventId, Node>, CliError> {
    let heads: HashSet<EventId> = ledger.heads().into_iter().collect();
    let since = resolve_ids(ledger, &args.since)?;
    let keep: Option<HashSet<EventId>> = match (args.exchange.as_deref(), since.is_empty()) {
        (Some(_), _) => Some(
            histories
                .iter()
                .flat_map(|h| h.entries.iter().map(|e| e.event_id))
                .collect(),
        ),
        (None, false) => Some(
            ledger
                .difference(&ledger.heads(), &since)?
                .into_iter()
                .collect(),
        ),
        (None, true) => None,
    };
    let mut nodes = BTreeMap::new();
    for event in ledger.iter() {
        let event = event?;
        if keep.as_ref().is_none_or(|k| k.contains(&event.id())) {
            let head = heads.contains(&event.id());
            nodes.insert(event.id(), Node::Admitted { event, head });
        }
    }
    if args.exchange.is_some() {
        return Ok(nodes);
    }
    // Pending events, what they miss, and what was rejected on release.
    let rejected: HashMap<EventId, String> = ledger
        .rejected_on_release()
        .into_iter()
        .map(|(id, r)| (id, r.code().as_str().to_string()))
        .collect();
    for (id, missing) in ledger.pending() {
        if let Some(event) = ledger.pending_event(&id) {
            nodes.insert(id, Node::Pending(event));
        }
        for m in missing {
            if !nodes.contains_key(&m) && ledger.pending_event(&m).is_none() {
                let node = rejected
                    .get(&m)
                    .map_or(Node::Missing, |code| Node::Rejected(code.clone()));
                nodes.insert(m, node);
            }
        }
    }
    for (id, code) in rejected {
        nodes.entry(id).or_insert(Node::Rejected(code));
    }
    Ok(nodes)
}

/// The short verdict of a node label: `terminal`, `ignored: conflict_loser`.
fn verdict_label(v: &Verdict) -> String {
    match v {
        Verdict::Ignored { reason, .. } => format!("ignored: {reason}"),
        other => other.as_str().to_string(),
    }
}

/// The DOT text.
fn dot(
    nodes: &BTreeMap<EventId, Node>,
    verdicts: &HashMap<EventId, (Step, String, Verdict)>,
) -> String {
    let mut out = String::from(
        "// akledger causal DAG. Edges run from a dependency to the event naming it.\n\
         // Double border: head. Dashed: pending. Dotted grey: missing (never seen).\n\
         // Red octagon: rejected on release. Exchange items: blue folded, green terminal,\n\
         // light blue applied, orange with a red dashed border ignored (the reason in the\n\
         // label); a control's label names its action.\n\
         digraph akledger {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n",
    );
    for (id, node) in nodes {
        let (label, attrs) = match node {
            Node::Admitted { event, head } => {
                let mut label = format!("{}\\n{}", short_id(&id.to_string()), event.kind());
                let mut attrs = String::new();
                if let Some((step, what, v)) = verdicts.get(id) {
                    label.push_str(&format!("\\n{}: {}", what, verdict_label(v)));
                    match (step, v) {
                        (_, Verdict::Ignored { .. }) => attrs.push_str(&format!(
                            ", fillcolor=\"{}\", color=red, style=\"rounded,filled,dashed\", penwidth=2",
                            verdict_color(v)
                        )),
                        (Step::Control(_), _) => {
                            attrs.push_str(&format!(", fillcolor=\"{}\"", verdict_color(v)))
                        }
                        _ => {}
                    }
                }
                if *head {
                    attrs.push_str(", peripheries=2, penwidth=2");
                }
                (label, attrs)
            }
            Node::Pending(event) => (
                format!("{}\\n{}\\npending", short_id(&id.to_string()), event.kind()),
                ", style=\"rounded,dashed,filled\", fillcolor=lightyellow".to_string(),
            ),
            Node::Missing => (
                format!("{}\\nmissing", short_id(&id.to_string())),
                ", style=\"dotted\", color=grey50, fontcolor=grey40".to_string(),
            ),
            Node::Rejected(code) => (
                format!("{}\\nrejected\\n{code}", short_id(&id.to_string())),
                ", shape=octagon, style=filled, fillcolor=mistyrose, color=red".to_string(),
            ),
        };
        let _ = writeln!(out, "  \"{id}\" [label=\"{label}\"{attrs}];");
    }
    for (id, node) in nodes {
        let event = match node {
            Node::Admitted { event, .. } | Node::Pending(event) => event,
            _ => continue,
        };
        for dep in event.dependencies() {
            if nodes.contains_key(dep) {
                let _ = writeln!(out, "  \"{dep}\" -> \"{id}\";");
            }
        }
    }
    out.push('}');
    out
}
