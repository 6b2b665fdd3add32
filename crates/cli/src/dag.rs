//! `akledger dag --dot [--since ID…] [--exchange X]`: the causal DAG as Graphviz DOT. One
//! node per admitted event (heads drawn with a double border), pending events dashed, the
//! events they miss dotted (never seen) or red (rejected when released), and exchange
//! controls filled by what the fold made of them; one edge per DAG dependency (PROFILE §5),
//! drawn from the dependency to the event that names it.

use clap::Args;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use akledger::exchange::{ExchangeHistory, Step, Verdict};
use akledger::{Event, EventId, Ledger};

use super::history::resolve_sidecar;
use super::html::verdict_color;
use super::output::{print_lines, resolve_ids, short_id, CliError, LedgerArgs, Outcome};

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

/// What each exchange item is and what the fold made of it, from `histories`.
fn verdicts(histories: &[ExchangeHistory]) -> HashMap<EventId, (Step, Verdict)> {
    histories
        .iter()
        .flat_map(|h| &h.entries)
        .map(|e| (e.event_id, (e.step.clone(), e.verdict.clone())))
        .collect()
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
fn dot(nodes: &BTreeMap<EventId, Node>, verdicts: &HashMap<EventId, (Step, Verdict)>) -> String {
    let mut out = String::from(
        "// akledger causal DAG. Edges run from a dependency to the event naming it.\n\
         // Double border: head. Dashed: pending. Dotted grey: missing (never seen).\n\
         // Red octagon: rejected on release. Controls: green terminal, light blue applied,\n\
         // orange ignored (the reason in the label).\n\
         digraph akledger {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\", fontsize=10];\n",
    );
    for (id, node) in nodes {
        let (label, attrs) = match node {
            Node::Admitted { event, head } => {
                let mut label = format!("{}\\n{}", short_id(&id.to_string()), event.kind());
                let mut attrs = String::new();
                if let Some((step, v)) = verdicts.get(id) {
                    label.push_str(&format!("\\n{}: {}", step.role(), verdict_label(v)));
                    if matches!(step, Step::Control(_)) {
                        attrs.push_str(&format!(", fillcolor=\"{}\"", verdict_color(v)));
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
