package table

// Lance's MemWAL LSM write path (a table's "LSM write spec", installed by the LanceDB remote
// client's setLsmWriteSpec and stored as the __lance_mem_wal system index) is not implemented
// here: this server writes every row into the base table. So no table it writes has a spec, and
// the remote client's LSM doors answer what a table without one answers (lancedb rust/lancedb
// src/remote/table.rs, get_lsm_write_spec and get_lsm_stats: null "only when the LSM write path
// is not enabled"), except on a table another Lance writer gave a MemWAL index, which is refused:
// null would hide the rows its un-compacted tiers hold.

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
)

// memWALIndexName is the system index Lance's MemWAL keeps a table's LSM state in.
const memWALIndexName = "__lance_mem_wal"

// LSM operations named in their answers, as the LanceDB client names them.
const (
	LSMSetWriteSpec   = "set_lsm_write_spec"
	LSMUnsetWriteSpec = "unset_lsm_write_spec"
	LSMFlush          = "flush_lsm"
	LSMCompact        = "compact_lsm"
)

// LSMState says whether t has an LSM write path: nil when it has none (every table this server
// writes), Unsupported when its latest version carries a MemWAL index another writer installed.
func LSMState(ctx context.Context, t catalog.Table) error {
	ds, err := t.Dataset()
	if err != nil {
		return err
	}
	v, err := ds.OpenLatest(ctx)
	if err != nil {
		return err
	}
	for _, idx := range v.Indices() {
		if idx.GetName() == memWALIndexName {
			return nserr.Unsupportedf("table %s has a MemWAL index (%s), the LSM write path of another Lance writer: "+
				"this server does not read LSM write specs or their un-compacted tiers", t.Meta().ID, memWALIndexName)
		}
	}
	return nil
}

// LSMWrite is the answer of an LSM operation that changes t (op, one of the LSM* names): setting
// a spec is refused (406: the write path is not implemented), the others are 400 as on a table
// without a spec (the embedded client's "no LSM write spec is set on this table").
func LSMWrite(ctx context.Context, t catalog.Table, op string) error {
	if err := LSMState(ctx, t); err != nil {
		return err
	}
	if op == LSMSetWriteSpec {
		return nserr.Unsupportedf("%s: this server does not implement Lance's MemWAL LSM write path; "+
			"merge_insert writes into the base table (use the standard merge_insert, useLsm(false))", op)
	}
	return nserr.InvalidInputf("%s: no LSM write spec is set on this table", op)
}
