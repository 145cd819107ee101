package index

// HNSW sub-indices (IVF_HNSW_FLAT, IVF_HNSW_SQ, IVF_HNSW_PQ) in Lance's layout, measured on the
// Node SDK's IVF_HNSW_SQ (0.39.0) and read as Lance's HNSW::load reads it:
//
// index.idx holds, partition after partition (the IVF message's offsets and lengths count
// its rows), the graph of each partition level after level from level 0: one row per node
// of the level, {__vector_id: uint32 (the node: its row within the partition in
// auxiliary.idx), __neighbors: list<uint32>, _distance: list<float32>}. The schema
// metadata lance:hnsw is a JSON list of one JSON string per partition: {entry_point,
// params: {max_level, m, ef_construction, prefetch_distance}, level_offsets}, level_offsets
// being the first row of each of the max_level levels within the partition and then its
// row count (max_level + 1 numbers).
//
// Lance's graph: node 0 is on every level (newer Lance searches from it, older from
// entry_point: ours is 0, so both agree); every other node is on 1 + ⌊-ln(u)/ln(m)⌋ levels
// (at most max_level); a node keeps at most 2m neighbors on level 0 and m above, chosen by
// HNSW's heuristic. A search descends greedily from the entry point to level 0 and runs a
// beam of ef there (ef defaults to k + k/2, k being what the query engine asks for).

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// The HNSW parameters LanceDB builds with (lancedb's HnswPqOptions/HnswSqOptions defaults).
const (
	hnswMaxLevel       = 7
	hnswM              = 20
	hnswEfConstruction = 300
	// hnswMaxM and hnswMaxEfConstruction bound a request's m and ef_construction (the build's
	// CPU time grows with both; Lance takes any usize).
	hnswMaxM              = 256
	hnswMaxEfConstruction = 10_000
	// hnswMaxNodes bounds one partition's graph read from a file: a node id is a uint32 and
	// the reader holds a slice per node and level.
	hnswMaxNodes = 1 << 26
)

type hnswParams struct {
	MaxLevel         int  `json:"max_level"`
	M                int  `json:"m"`
	EfConstruction   int  `json:"ef_construction"`
	PrefetchDistance *int `json:"prefetch_distance"`
}

type hnswMeta struct {
	EntryPoint   uint32     `json:"entry_point"`
	Params       hnswParams `json:"params"`
	LevelOffsets []int      `json:"level_offsets"`
}

// hnswGraph is one partition's graph: levels[l][node] are node's neighbors on level l (nil
// when the node is not on it), nearest first; dists the distances stored beside them.
type hnswGraph struct {
	entry  uint32
	m, efc int // the build's parameters (lance:hnsw records them)
	levels [][][]uint32
	dists  [][][]float32
}

// nodeDist is a node and its distance to the query.
type nodeDist struct {
	id uint32
	d  float32
}

// minHeap / maxHeap of nodeDist (ties by id, so a search is deterministic).
type ndHeap struct {
	s   []nodeDist
	max bool
}

func (h *ndHeap) Len() int { return len(h.s) }
func (h *ndHeap) Less(i, j int) bool {
	a, b := h.s[i], h.s[j]
	if a.d != b.d {
		return (a.d < b.d) != h.max
	}
	return (a.id < b.id) != h.max
}
func (h *ndHeap) Swap(i, j int) { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *ndHeap) Push(x any)    { h.s = append(h.s, x.(nodeDist)) }
func (h *ndHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}

// visitSet marks the nodes a beam has seen (a generation per mark: reset is O(1)).
type visitSet struct {
	mark []uint32
	gen  uint32
}

func (v *visitSet) reset(n int) {
	if len(v.mark) < n {
		v.mark = make([]uint32, n)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.mark)
		v.gen = 1
	}
}

// add marks id, reporting whether it was new.
func (v *visitSet) add(id uint32) bool {
	if v.mark[id] == v.gen {
		return false
	}
	v.mark[id] = v.gen
	return true
}

// greedy moves ep to its nearest neighbor on level l until none is nearer.
func (g *hnswGraph) greedy(l int, ep nodeDist, dist func(uint32) float32) nodeDist {
	for {
		moved := false
		for _, nb := range g.levels[l][ep.id] {
			if d := dist(nb); d < ep.d {
				ep, moved = nodeDist{nb, d}, true
			}
		}
		if !moved {
			return ep
		}
	}
}

// beam is HNSW's search of level l from ep keeping the ef nearest: every node is
// traversed, only those allow accepts (nil: all) are results. The results, nearest first.
func (g *hnswGraph) beam(l int, ep nodeDist, ef int, dist func(uint32) float32, allow func(uint32) bool, visited *visitSet) []nodeDist {
	cand := &ndHeap{}
	res := &ndHeap{max: true}
	visited.reset(len(g.levels[l]))
	visited.add(ep.id)
	heap.Push(cand, ep)
	if allow == nil || allow(ep.id) {
		heap.Push(res, ep)
	}
	for cand.Len() > 0 {
		c := heap.Pop(cand).(nodeDist)
		if res.Len() >= ef && c.d > res.s[0].d {
			break
		}
		for _, nb := range g.levels[l][c.id] {
			if int(nb) >= len(g.levels[l]) || !visited.add(nb) {
				continue
			}
			d := dist(nb)
			if res.Len() < ef || d < res.s[0].d {
				heap.Push(cand, nodeDist{nb, d})
				if allow == nil || allow(nb) {
					heap.Push(res, nodeDist{nb, d})
					if res.Len() > ef {
						heap.Pop(res)
					}
				}
			}
		}
	}
	out := slices.Clone(res.s)
	slices.SortFunc(out, cmpND)
	return out
}

func cmpND(a, b nodeDist) int {
	switch {
	case a.d < b.d:
		return -1
	case a.d > b.d:
		return 1
	case a.id < b.id:
		return -1
	case a.id > b.id:
		return 1
	}
	return 0
}

// search is the k nearest nodes to the query (dist) that allow accepts, at breadth ef.
func (g *hnswGraph) search(k, ef int, dist func(uint32) float32, allow func(uint32) bool) []nodeDist {
	if len(g.levels) == 0 || len(g.levels[0]) == 0 {
		return nil
	}
	ep := nodeDist{g.entry, dist(g.entry)}
	for l := len(g.levels) - 1; l >= 1; l-- {
		if g.levels[l][ep.id] != nil {
			ep = g.greedy(l, ep, dist)
		}
	}
	out := g.beam(0, ep, max(ef, k), dist, allow, &visitSet{})
	return out[:min(k, len(out))]
}

// buildHNSW builds the graph of n nodes, pair distances from pair, with Lance's parameters;
// rng draws the levels.
func buildHNSW(n, m, efc int, pair func(i, j uint32) float32, rng *rand.Rand) *hnswGraph {
	g := &hnswGraph{levels: make([][][]uint32, hnswMaxLevel), dists: make([][][]float32, hnswMaxLevel), m: m, efc: efc}
	for l := range g.levels {
		g.levels[l] = make([][]uint32, n)
		g.dists[l] = make([][]float32, n)
	}
	if n == 0 {
		return g
	}
	ml := 1 / math.Log(float64(max(m, 2)))
	top := make([]int, n) // the highest level of each node
	top[0] = hnswMaxLevel - 1
	for i := 1; i < n; i++ {
		top[i] = min(int(-math.Log(1-rng.Float64())*ml), hnswMaxLevel-1)
	}
	for l := range hnswMaxLevel {
		for i := range n {
			if top[i] >= l {
				g.levels[l][i] = []uint32{}
				g.dists[l][i] = []float32{}
			}
		}
	}
	visited := &visitSet{}
	for i := 1; i < n; i++ {
		node := uint32(i)
		dist := func(j uint32) float32 { return pair(node, j) }
		ep := nodeDist{0, dist(0)}
		for l := hnswMaxLevel - 1; l > top[i]; l-- {
			ep = g.greedy(l, ep, dist)
		}
		for l := top[i]; l >= 0; l-- {
			// Only nodes inserted so far are linked: those below i (the rest have no edges yet
			// and are unreachable).
			found := g.beam(l, ep, efc, dist, nil, visited)
			mmax := m
			if l == 0 {
				mmax = 2 * m
			}
			sel := selectNeighbors(found, mmax, pair)
			g.setNeighbors(l, node, sel)
			for _, e := range sel {
				nb := append(g.neighborDists(l, e.id), nodeDist{node, e.d})
				slices.SortFunc(nb, cmpND)
				if len(nb) > mmax {
					nb = selectNeighbors(nb, mmax, pair)
				}
				g.setNeighbors(l, e.id, nb)
			}
			if len(found) > 0 {
				ep = found[0]
			}
		}
	}
	return g
}

func (g *hnswGraph) neighborDists(l int, id uint32) []nodeDist {
	out := make([]nodeDist, len(g.levels[l][id]))
	for i, nb := range g.levels[l][id] {
		out[i] = nodeDist{nb, g.dists[l][id][i]}
	}
	return out
}

func (g *hnswGraph) setNeighbors(l int, id uint32, nb []nodeDist) {
	ids, ds := make([]uint32, len(nb)), make([]float32, len(nb))
	for i, e := range nb {
		ids[i], ds[i] = e.id, e.d
	}
	g.levels[l][id], g.dists[l][id] = ids, ds
}

// selectNeighbors is HNSW's heuristic over cands (nearest first): a candidate is kept when it
// is nearer the node than every neighbor kept before it, up to m.
func selectNeighbors(cands []nodeDist, m int, pair func(i, j uint32) float32) []nodeDist {
	if len(cands) <= m {
		return cands
	}
	out := make([]nodeDist, 0, m)
	for _, c := range cands {
		ok := true
		for _, s := range out {
			if pair(c.id, s.id) < c.d {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
			if len(out) == m {
				break
			}
		}
	}
	return out
}

// meta is g's lance:hnsw entry (rows: its row count per level).
func (g *hnswGraph) meta() (hnswMeta, int) {
	pd := 2
	m := hnswMeta{EntryPoint: g.entry, Params: hnswParams{MaxLevel: hnswMaxLevel, M: g.m, EfConstruction: g.efc, PrefetchDistance: &pd}}
	if len(g.levels) == 0 || len(g.levels[0]) == 0 {
		m.LevelOffsets = []int{0}
		return m, 0
	}
	rows := 0
	for _, lv := range g.levels {
		m.LevelOffsets = append(m.LevelOffsets, rows)
		for _, nb := range lv {
			if nb != nil {
				rows++
			}
		}
	}
	m.LevelOffsets = append(m.LevelOffsets, rows)
	return m, rows
}

// parseHNSWMeta reads the lance:hnsw list of nparts entries.
func parseHNSWMeta(s string, nparts int) ([]hnswMeta, error) {
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil || len(list) != nparts {
		return nil, fmt.Errorf("%w: lance:hnsw of %d partitions: %.200q", ErrCorrupt, nparts, s)
	}
	out := make([]hnswMeta, nparts)
	for i, e := range list {
		if err := json.Unmarshal([]byte(e), &out[i]); err != nil {
			return nil, fmt.Errorf("%w: lance:hnsw partition %d: %v", ErrCorrupt, i, err)
		}
		lo := out[i].LevelOffsets
		if len(lo) == 0 || lo[0] != 0 || len(lo) > 64 {
			return nil, fmt.Errorf("%w: lance:hnsw partition %d: level offsets %v", ErrCorrupt, i, lo)
		}
		for j := 1; j < len(lo); j++ {
			if lo[j] < lo[j-1] {
				return nil, fmt.Errorf("%w: lance:hnsw partition %d: level offsets %v", ErrCorrupt, i, lo)
			}
		}
	}
	return out, nil
}

const (
	hnswKey         = "lance:hnsw"
	vectorIDColumn  = "__vector_id"
	neighborsColumn = "__neighbors"
	distanceColumn  = "_distance"
)

// hnswFields is index.idx's schema for a graph (nullable, as the SDK writes it).
func hnswFields() []arrow.Field {
	return []arrow.Field{
		{Name: vectorIDColumn, Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: neighborsColumn, Type: arrow.ListOf(arrow.PrimitiveTypes.Uint32), Nullable: true},
		{Name: distanceColumn, Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
	}
}

// buildGraphs builds every partition's graph on its vectors, workers() partitions at a time.
func (b *VectorBuilder) buildGraphs(ctx context.Context) ([]*hnswGraph, error) {
	dim := b.opts.Dim
	out := make([]*hnswGraph, len(b.ids))
	boundedEach(ctx, len(b.ids), func(p int) {
		vecs := b.graphVectors(p)
		pair := func(i, j uint32) float32 {
			x, y := vecs[int(i)*dim:int(i+1)*dim], vecs[int(j)*dim:int(j+1)*dim]
			if b.opts.Metric == L2 {
				return l2sq(x, y)
			}
			return 1 - dot(x, y) // cosine (normalized) and dot
		}
		out[p] = buildHNSW(len(b.ids[p]), b.opts.M, b.opts.EfConstruction, pair, rand.New(rand.NewPCG(b.opts.Seed, uint64(p)+0x686e7377)))
	})
	return out, ctx.Err()
}

// writeGraphs writes each graph's levels in order, level 0 first, a node per row.
func writeGraphs(w *lancefile.Writer, schema *arrow.Schema, graphs []*hnswGraph) error {
	mem := memory.DefaultAllocator
	for _, g := range graphs {
		for l := range g.levels {
			ids := array.NewUint32Builder(mem)
			nbs := array.NewListBuilder(mem, arrow.PrimitiveTypes.Uint32)
			nbv := nbs.ValueBuilder().(*array.Uint32Builder)
			ds := array.NewListBuilder(mem, arrow.PrimitiveTypes.Float32)
			dsv := ds.ValueBuilder().(*array.Float32Builder)
			n := 0
			for id, nb := range g.levels[l] {
				if nb == nil {
					continue
				}
				n++
				ids.Append(uint32(id))
				nbs.Append(true)
				nbv.AppendValues(nb, nil)
				ds.Append(true)
				dsv.AppendValues(g.dists[l][id], nil)
			}
			cols := []arrow.Array{ids.NewArray(), nbs.NewArray(), ds.NewArray()}
			ids.Release()
			nbs.Release()
			ds.Release()
			var err error
			if n > 0 {
				rec := array.NewRecordBatch(schema, cols, int64(n))
				err = w.Write(rec)
				rec.Release()
			}
			for _, c := range cols {
				c.Release()
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// graphVectors are the vectors partition p's graph is built on: the rows' own (FLAT, or as
// Add kept them), else decoded from their codes, as Lance rebuilds a graph from its storage
// (a segment loaded back, remapped or merged holds only codes).
func (b *VectorBuilder) graphVectors(p int) []float32 {
	dim, n := b.opts.Dim, len(b.ids[p])
	switch {
	case b.opts.Kind.quant() == IVFFlat:
		return b.vecs[p]
	case len(b.gvecs[p]) == n*dim:
		return b.gvecs[p]
	}
	out := make([]float32, n*dim)
	codes := b.codes[p]
	if b.opts.Kind.quant() == IVFSQ {
		step := (b.sqEnd - b.sqStart) / 255
		for i, c := range codes[:n*dim] {
			out[i] = float32(b.sqStart + float64(c)*step)
		}
		return out
	}
	m, sd := b.opts.NumSubVectors, b.subdim
	for i := range n {
		x := out[i*dim : (i+1)*dim]
		for s := range m {
			c := int(codes[i*m+s])
			copy(x[s*sd:(s+1)*sd], b.codebook[(s*pqCentroids+c)*sd:(s*pqCentroids+c+1)*sd])
		}
		if b.residual() {
			cv := b.centroids[p*dim : (p+1)*dim]
			for j := range x {
				x[j] += cv[j]
			}
		}
	}
	return out
}
