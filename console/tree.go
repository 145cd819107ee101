package console

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// The estate tree: projects > warehouses > namespaces (nested, to every depth) > tables, walked
// through the listing doors only (each filters by what the caller may see), so the tree shows
// exactly what the API would. The walk is bounded (maxTreeNodes objects, maxListPages pages of a
// listing), tables get their row count and size from the stats door (at most maxStatTables, a
// few at a time), and search and paging run here, on the server: the browser gets one page of
// rows, never the whole estate.

const (
	// maxTreeNodes bounds the walk: past it the tree says it is cut short and search names what
	// it covered.
	maxTreeNodes = 2000
	// listPage is the page size the walk asks the listing doors for; maxListPages bounds how
	// many pages one listing may take.
	listPage     = 500
	maxListPages = 20
	// maxStatTables bounds the stats calls of one page view; statConcurrency how many at once.
	maxStatTables   = 200
	statConcurrency = 8
	// treePageRows is how many rows one page of the tree shows.
	treePageRows = 100
)

// treeRow is one line of the tree as the page shows it.
type treeRow struct {
	Kind  string // project, warehouse, root, namespace, table
	Name  string
	ID    []string // namespace and table ids; nil otherwise
	Depth int
	// Status is a warehouse's; Protected a project's.
	Status    string
	Protected bool
	// Namespaces and Tables count the direct children a namespace (or warehouse, or the root)
	// lists; Rows and Bytes are a table's, or a container's totals over the tables below it.
	Namespaces, Tables int
	Rows, Bytes        int64
	// Partial: some table below has no stats (refused, failed, or past maxStatTables), so the
	// totals are a lower bound.
	Partial  bool
	HasStats bool
	Err      string
	// Closed: the caller sees the namespace (a grant below it) but may not list inside it.
	Closed bool
	// Match says the row matched the search (its ancestors are shown for context).
	Match bool

	parent   int // index of the parent row; -1 at the top
	children []int
}

// estateTree is the walk's result.
type estateTree struct {
	rows  []*treeRow
	cut   bool // maxTreeNodes reached
	notes []string
}

// walkEstate lists everything the caller may see, depth first.
func (c *Console) walkEstate(ctx context.Context, r *http.Request, s session) *estateTree {
	t := &estateTree{}
	var projects controlapi.ProjectList
	// Listing projects is the estate admins' (project.list on the catalog): anyone else is refused
	// and sees the projects of the warehouses they may see instead, not the refusal.
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/projects", nil, &projects); err != nil && !notOffered(err) && !refused(err) {
		t.notes = append(t.notes, "projects: "+c.errText(err))
	}
	var whs controlapi.WarehouseList
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/warehouses", nil, &whs); err != nil && !notOffered(err) && !refused(err) {
		t.notes = append(t.notes, "warehouses: "+c.errText(err))
	}
	projectRow := map[string]int{}
	addProject := func(id string, protected bool) int {
		if i, ok := projectRow[id]; ok {
			return i
		}
		i := t.add(&treeRow{Kind: "project", Name: id, Protected: protected, parent: -1})
		projectRow[id] = i
		return i
	}
	sort.Slice(projects.Projects, func(i, j int) bool { return projects.Projects[i].Id < projects.Projects[j].Id })
	for _, p := range projects.Projects {
		addProject(p.Id, deref(p.Protected))
	}
	sort.Slice(whs.Warehouses, func(i, j int) bool { return whs.Warehouses[i].Id < whs.Warehouses[j].Id })
	bound := map[string]bool{}
	for _, wh := range whs.Warehouses {
		pi := addProject(wh.Project, false)
		if pi < 0 {
			break
		}
		wi := t.add(&treeRow{Kind: "warehouse", Name: wh.Id, Status: string(wh.Status), Depth: 1, parent: pi})
		if wi < 0 {
			break
		}
		var nss controlapi.WarehouseNamespaceList
		err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/warehouses/"+url.PathEscape(wh.Id)+"/namespaces", nil, &nss)
		t.rows[wi].note(c, err)
		names := make([]string, 0, len(nss.Namespaces))
		for _, ns := range nss.Namespaces {
			bound[ns.Namespace] = true
			names = append(names, ns.Namespace)
		}
		sort.Strings(names)
		t.rows[wi].Namespaces = len(names)
		for _, ns := range names {
			c.walkNamespace(ctx, r, s, t, []string{ns}, 2, wi)
		}
	}
	// The catalog root: top-level namespaces bound to no warehouse, and tables of one part.
	top, topErr := c.listAll(ctx, r, s, "/v1/namespace/"+c.idPath(nil)+"/list")
	tables, tabErr := c.listAll(ctx, r, s, "/v1/namespace/"+c.idPath(nil)+"/table/list")
	var free []string
	for _, ns := range top {
		if !bound[ns] {
			free = append(free, ns)
		}
	}
	if len(free) > 0 || len(tables) > 0 {
		ri := t.add(&treeRow{Kind: "root", Name: "catalog root", parent: -1, Namespaces: len(free), Tables: len(tables)})
		if ri < 0 {
			return t
		}
		for _, ns := range free {
			c.walkNamespace(ctx, r, s, t, []string{ns}, 1, ri)
		}
		for _, tb := range tables {
			if t.add(&treeRow{Kind: "table", Name: tb, ID: []string{tb}, Depth: 1, parent: ri}) < 0 {
				break
			}
		}
	}
	// A caller who may not list the root sees what their grants lead to through the warehouses;
	// the refusal itself is no news to them.
	for _, err := range []error{topErr, tabErr} {
		if err != nil && !refused(err) && !notOffered(err) {
			t.notes = append(t.notes, "catalog root: "+c.errText(err))
		}
	}
	return t
}

// note records a listing's failure on the row: a refusal is no error to the caller (they see the
// namespace because of a grant below it, not on it), anything else is shown.
func (row *treeRow) note(c *Console, err error) {
	switch {
	case err == nil:
	case refused(err):
		row.Closed = true
	case row.Err == "":
		row.Err = c.errText(err)
	}
}

// add appends a row under its parent, unless the walk is full.
func (t *estateTree) add(row *treeRow) int {
	if len(t.rows) >= maxTreeNodes {
		t.cut = true
		return -1
	}
	t.rows = append(t.rows, row)
	i := len(t.rows) - 1
	if row.parent >= 0 {
		p := t.rows[row.parent]
		p.children = append(p.children, i)
	}
	return i
}

func (c *Console) walkNamespace(ctx context.Context, r *http.Request, s session, t *estateTree, id []string, depth, parent int) {
	if t.cut {
		return
	}
	ni := t.add(&treeRow{Kind: "namespace", Name: id[len(id)-1], ID: id, Depth: depth, parent: parent})
	if ni < 0 {
		return
	}
	nss, err := c.listAll(ctx, r, s, "/v1/namespace/"+c.idPath(id)+"/list")
	t.rows[ni].note(c, err)
	tables, err := c.listAll(ctx, r, s, "/v1/namespace/"+c.idPath(id)+"/table/list")
	t.rows[ni].note(c, err)
	t.rows[ni].Namespaces, t.rows[ni].Tables = len(nss), len(tables)
	for _, ns := range nss {
		c.walkNamespace(ctx, r, s, t, append(slices.Clone(id), ns), depth+1, ni)
	}
	for _, tb := range tables {
		if t.add(&treeRow{Kind: "table", Name: tb, ID: append(slices.Clone(id), tb), Depth: depth + 1, parent: ni}) < 0 {
			return
		}
	}
}

// listAll pages through a listing door (namespaces or tables), bounded by maxListPages, sorted.
func (c *Console) listAll(ctx context.Context, r *http.Request, s session, path string) ([]string, error) {
	var out []string
	token := ""
	for range maxListPages {
		q := url.Values{"limit": {strconv.Itoa(listPage)}}
		if token != "" {
			q.Set("page_token", token)
		}
		if c.delim != "$" {
			q.Set("delimiter", c.delim)
		}
		var page struct {
			Namespaces []string         `json:"namespaces"`
			Tables     []string         `json:"tables"`
			PageToken  *nsapi.PageToken `json:"page_token"`
		}
		if err := c.callJSON(ctx, r, s, http.MethodGet, path+"?"+q.Encode(), nil, &page); err != nil {
			return out, err
		}
		out = append(out, page.Namespaces...)
		out = append(out, page.Tables...)
		if page.PageToken == nil || *page.PageToken == "" || *page.PageToken == token {
			break
		}
		token = *page.PageToken
	}
	sort.Strings(out)
	return out, nil
}

// search marks the rows whose name or id contains q (case-insensitive) and keeps them with their
// ancestors; an empty q keeps every row.
func (t *estateTree) search(q string) []*treeRow {
	q = strings.ToLower(strings.TrimSpace(q))
	keep := make([]bool, len(t.rows))
	for i, row := range t.rows {
		if q == "" {
			keep[i] = true
			continue
		}
		hay := strings.ToLower(row.Name)
		if row.ID != nil {
			hay += "\x00" + strings.ToLower(strings.Join(row.ID, "."))
		}
		if strings.Contains(hay, q) {
			row.Match = true
			for j := i; j >= 0 && !keep[j]; j = t.rows[j].parent {
				keep[j] = true
			}
		}
	}
	var out []*treeRow
	for i, row := range t.rows {
		if keep[i] {
			out = append(out, row)
		}
	}
	return out
}

// fillStats asks the stats door for the tables among rows (at most maxStatTables, the first
// ones first: the caller puts the page's rows there), then adds each table's numbers into every
// container above it.
func (c *Console) fillStats(ctx context.Context, r *http.Request, s session, t *estateTree, rows []*treeRow) {
	var tables []*treeRow
	seen := map[*treeRow]bool{}
	for _, row := range rows {
		if row.Kind == "table" && !seen[row] {
			seen[row] = true
			tables = append(tables, row)
		}
	}
	if len(tables) > maxStatTables {
		tables = tables[:maxStatTables]
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, statConcurrency)
	for _, row := range tables {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var st nsapi.GetTableStatsResponse
			if err := c.callJSON(ctx, r, s, http.MethodPost, "/v1/table/"+c.idPath(row.ID)+"/stats", map[string]any{}, &st); err != nil {
				row.Err = c.errText(err)
				return
			}
			row.Rows, row.Bytes, row.HasStats = st.NumRows, st.TotalBytes, true
		}()
	}
	wg.Wait()
	for _, row := range t.rows {
		if row.Kind != "table" {
			continue
		}
		for p := row.parent; p >= 0; p = t.rows[p].parent {
			up := t.rows[p]
			if row.HasStats {
				up.Rows += row.Rows
				up.Bytes += row.Bytes
				up.HasStats = true
			} else {
				up.Partial = true
			}
		}
	}
}

type treePage struct {
	Rows       []*treeRow
	Total      int
	Page, Last int
	Prev, Next string // links, "" at the ends
	Cut        bool
}

// paginate cuts rows into pages of treePageRows; page counts from 1.
func paginate(rows []*treeRow, page int, link func(int) string) treePage {
	last := max(1, (len(rows)+treePageRows-1)/treePageRows)
	page = min(max(page, 1), last)
	from := (page - 1) * treePageRows
	to := min(from+treePageRows, len(rows))
	p := treePage{Rows: rows[from:to], Total: len(rows), Page: page, Last: last}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if page < last {
		p.Next = link(page + 1)
	}
	return p
}
