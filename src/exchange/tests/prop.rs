//! Property: the fold is a pure function of the event set (any order, bit-identical
//! output), and projections keep the status invariants of arkret-facts §4.4.
