package namespace

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/table"
)

// BulkFill writes namespaces ns0…ns<spaces-1>, each holding tables t0…t<perSpace-1>, one
// manifest commit per namespace (what 10,000 declares would leave, without 10,000 commits).
// The first table of each namespace gets a real (empty) dataset, version 1.
func BulkFill(ctx context.Context, n *Namespace, spaces, perSpace int) error {
	for i := range spaces {
		nsID := fmt.Sprintf("ns%d", i)
		_, err := n.commit(ctx, func(s *snapshot) (*change, error) {
			ch := &change{inserts: []newRow{{ObjectID: nsID, Type: TypeNamespace}}}
			for j := range perSpace {
				oid := fmt.Sprintf("%s$t%d", nsID, j)
				loc := fmt.Sprintf("%08x_%s", i*perSpace+j, oid)
				ch.inserts = append(ch.inserts, newRow{ObjectID: oid, Type: TypeTable, Location: &loc})
			}
			return ch, nil
		})
		if err != nil {
			return err
		}
		t, err := n.DescribeTable(ctx, []string{nsID, "t0"})
		if err != nil {
			return err
		}
		if err := emptyDataset(ctx, n.Dataset(t)); err != nil {
			return err
		}
	}
	return nil
}

// emptyDataset writes version 1 of an empty dataset with the manifest table's schema.
func emptyDataset(ctx context.Context, ds *lance.Dataset) error {
	fields, err := lancefile.LanceFields(manifestSchema(), 0)
	if err != nil {
		return err
	}
	m := &tablepb.Manifest{
		Fields: fields, Version: 1, Timestamp: timestamppb.New(time.Now().UTC()),
		WriterVersion: &tablepb.Manifest_WriterVersion{Library: lance.WriterLibrary, Version: lance.WriterVersion},
		DataFormat:    &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.1"},
	}
	txn := &tablepb.Transaction{Uuid: uuid.NewString(), Operation: &tablepb.Transaction_Overwrite_{Overwrite: &tablepb.Transaction_Overwrite{Schema: fields}}}
	_, err = ds.PutManifest(ctx, lance.NamingV2, &lance.ManifestFile{Manifest: m, Transaction: txn})
	return err
}

// setHook makes n run h at point p of every create, declare, overwrite or drop (hookPoint says
// where): the place to race another operation against it deterministically. Set it before n is
// used concurrently.
func (n *Namespace) setHook(p hookPoint, h func(*catalog.Entry)) {
	if n.hooks == nil {
		n.hooks = map[hookPoint]func(*entry){}
	}
	n.hooks[p] = func(t *entry) { h(t.Entry) }
}

// handleOf is the handle of an entry a test holds (the catalog's entry, as the root answered
// it): a manifest entry, as every table these tests create is.
func (n *Namespace) handleOf(t *catalog.Entry) *table.Table {
	return n.handle(&entry{Entry: t, inManifest: true})
}
