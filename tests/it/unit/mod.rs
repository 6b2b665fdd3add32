//! White-box tests of the engine's modules, moved out of the library so that `cargo test`
//! compiles the engine once (a library's own `#[cfg(test)]` modules build it a second time).
mod key_file;
mod ledger_admit;
mod ledger_feed;
mod ledger_graph_file_view;
mod ledger_id_table;
mod ledger_index;
mod ledger_pending_set;
mod ledger_pool;
mod ledger_positions;
mod ledger_queries;
mod ledger_record;
mod ledger_snapshot;
mod ledger_stamps;
mod log_format;
mod store_log;
mod store_log_format;
mod store_root;
mod store_tables;
mod sync_budget;
mod sync_frame;
mod workload;
