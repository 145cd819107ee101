package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/gen/controlapi"
	"github.com/lancecat/lancecat/gen/nsapi"
)

// base is what every page shows: who is signed in, the flash of the last action, the CSRF token
// its forms carry.
type base struct {
	Title     string
	Principal string
	Authz     string
	Admin     bool
	CSRF      string
	Flash     string
	FlashErr  string
	Back      string // this page, for forms that return to it
	Delim     string
}

func (c *Console) base(ctx context.Context, r *http.Request, s session, title string) base {
	b := base{Title: title, CSRF: s.csrf(), Flash: r.URL.Query().Get("flash"), FlashErr: r.URL.Query().Get("error"),
		Back: r.URL.RequestURI(), Delim: c.delim}
	var me controlapi.Me
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/me", nil, &me); err == nil {
		b.Principal, b.Authz, b.Admin = me.Principal, string(me.Authorization), me.EstateAdmin
	}
	return b
}

func (c *Console) render(w http.ResponseWriter, name string, data any) {
	t, ok := c.tmpl[name]
	if !ok {
		http.Error(w, "no such page", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.Execute(w, data); err != nil {
		c.log.Warn("console: rendering a page", "page", name, "error", err.Error())
	}
}

// errText is an error for the page: an API refusal as the API said it; anything else is a
// console fault, logged, shown generically.
func (c *Console) errText(err error) string {
	if err == nil {
		return ""
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	c.log.Warn("console: a call failed", "error", err.Error())
	return "the console could not read the answer (see the server log)"
}

// sectionErr is the error of one section of a page the caller may see: a refusal says the
// section is not theirs to see, in words (the page itself was not refused); anything else is
// errText.
func (c *Console) sectionErr(err error) string {
	if refused(err) {
		return "not shown to you: your access here does not include it"
	}
	return c.errText(err)
}

// refused says a door refused the caller (403): for a listing the caller may not run at all, the
// page shows what the caller may see without it.
func refused(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden
}

// notOffered says a door the deployment does not back (406 not implemented, 501): its section
// is left out instead of shown as an error.
func notOffered(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && (ae.Status == http.StatusNotAcceptable || ae.Status == http.StatusNotImplemented)
}

// ---- sign in ---------------------------------------------------------------------------------

type loginData struct {
	base
	Next  string
	Error string
	// OIDC names the issuer of the "Sign in with" button; empty: no OIDC sign-in.
	OIDC string
}

func (c *Console) loginData(next, msg string) loginData {
	d := loginData{base: base{Title: "Sign in"}, Next: next, Error: msg}
	if c.oidc != nil {
		d.OIDC = c.oidc.name()
	}
	return d
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	msg := ""
	if r.URL.Query().Get("expired") != "" {
		msg = "your sign-in expired: sign in again"
	}
	c.render(w, "login", c.loginData(localNext(r.URL.Query().Get("next")), msg))
}

// login checks the credential by asking GET /v1/me with it (the same authentication as any
// door), then keeps it in the session cookie. An empty credential signs in anonymously, which
// only works while authorization is off (the API refuses it otherwise, and so does this).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
		http.Error(w, "cross-origin form refused", http.StatusForbidden)
		return
	}
	cred := strings.TrimSpace(r.PostFormValue("credential"))
	next := localNext(r.PostFormValue("next"))
	value := "a:" + randomToken()
	if cred != "" {
		if r.PostFormValue("kind") == "bearer" {
			value = "b:" + cred
		} else {
			value = "k:" + cred
		}
	}
	s, _ := parseSession(value)
	var me controlapi.Me
	if err := c.callJSON(r.Context(), r, s, http.MethodGet, "/v1/me", nil, &me); err != nil {
		msg := c.errText(err)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			msg = "that credential was not accepted"
			if cred == "" {
				msg = "authorization is on: sign in with an API key or a bearer token"
			}
		}
		w.WriteHeader(http.StatusUnauthorized)
		c.render(w, "login", c.loginData(next, msg))
		return
	}
	setSessionCookie(w, r, value, 12*3600)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ session) {
	setSessionCookie(w, r, "", -1)
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}

// ---- the estate tree -------------------------------------------------------------------------

// nsNode is what the namespace page says about listing inside it.
type nsNode struct {
	Err string
}

type estateData struct {
	base
	Query string
	Tree  treePage
	// Empty: the walk found nothing the caller may see (not: the search matched nothing).
	Empty bool
	Notes []string
}

// estate is the tree projects → warehouses → namespaces → tables (tree.go), searched and paged
// here, with the tables' row counts and sizes.
func (c *Console) estate(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	d := estateData{base: c.base(ctx, r, s, "Estate"), Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	t := c.walkEstate(ctx, r, s)
	d.Notes, d.Empty = t.notes, len(t.rows) == 0
	rows := t.search(d.Query)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d.Tree = paginate(rows, page, func(n int) string {
		v := url.Values{"page": {strconv.Itoa(n)}}
		if d.Query != "" {
			v.Set("q", d.Query)
		}
		return Prefix + "/?" + v.Encode()
	})
	d.Tree.Cut = t.cut
	// The page's tables first, so what is shown has its numbers whatever the bound leaves out.
	c.fillStats(ctx, r, s, t, append(slices.Clone(d.Tree.Rows), rows...))
	c.render(w, "estate", d)
}

// ---- a namespace -----------------------------------------------------------------------------

type namespaceData struct {
	base
	ID         []string
	Node       nsNode
	Properties map[string]string
	Protected  *controlapi.Protection
	ProtErr    string
	Trash      []controlapi.Task
	Tasks      []controlapi.Task
	TasksErr   string
	Policy     *policyView
	PolicyErr  string
	Err        string
	// Tree is the subtree below the namespace (paged); Summary its own row (counts, totals).
	Tree    treePage
	Summary *treeRow
	Closed  bool
}

func (c *Console) namespace(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	id := c.splitID(r.URL.Query().Get("id"))
	d := namespaceData{base: c.base(ctx, r, s, "Namespace "+strings.Join(id, c.delim)), ID: id}
	if len(id) == 0 {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	var desc nsapi.DescribeNamespaceResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, "/v1/namespace/"+c.idPath(id)+"/describe", map[string]any{}, &desc); err != nil {
		d.Err = c.errText(err)
		c.render(w, "namespace", d)
		return
	}
	if desc.Properties != nil {
		d.Properties = *desc.Properties
	}
	// The subtree to every depth (tree.go), paged, with its tables' numbers.
	t := &estateTree{}
	c.walkNamespace(ctx, r, s, t, id, 0, -1)
	if len(t.rows) > 0 {
		d.Node.Err = t.rows[0].Err
		d.Closed = t.rows[0].Closed
		d.Summary = t.rows[0]
	}
	sub := t.rows
	if len(sub) > 0 {
		sub = sub[1:]
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d.Tree = paginate(sub, page, func(n int) string {
		return Prefix + "/namespace?" + url.Values{"id": {strings.Join(id, c.delim)}, "page": {strconv.Itoa(n)}}.Encode()
	})
	d.Tree.Cut = t.cut
	c.fillStats(ctx, r, s, t, append(slices.Clone(d.Tree.Rows), sub...))
	var prot controlapi.Protection
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/namespace/"+c.idPath(id)+"/protection"+c.delimQuery("?"), nil, &prot); err != nil {
		d.ProtErr = c.sectionErr(err)
	} else {
		d.Protected = &prot
	}
	var tl controlapi.TaskList
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/namespace/"+c.idPath(id)+"/tasks"+c.delimQuery("?"), nil, &tl); err != nil {
		if !notOffered(err) {
			d.TasksErr = c.sectionErr(err)
		}
	}
	pv, err := c.describePolicy(ctx, r, s, "namespace", id)
	d.Policy, d.PolicyErr = pv, c.errText(err)
	for _, t := range tl.Tasks {
		if t.Kind == "table" || t.Kind == "namespace" {
			d.Trash = append(d.Trash, t)
		} else {
			d.Tasks = append(d.Tasks, t)
		}
	}
	c.render(w, "namespace", d)
}

// ---- a table ---------------------------------------------------------------------------------

type indexRow struct {
	nsapi.IndexContent
	Indexed, Unindexed int64
	Coverage           string
}

type versionRow struct {
	Version   int64
	Operation string
	At        string
	Tags      []string
	Branches  []string
	Current   bool
}

type tableData struct {
	base
	ID       []string
	Err      string
	Desc     nsapi.DescribeTableResponse
	Stats    *nsapi.GetTableStatsResponse
	StatsErr string
	Versions []versionRow
	VerErr   string
	OpsErr   string
	// VerNext and VerFirst page the timeline (older versions; back to the newest).
	VerNext, VerFirst string
	Branches          []string
	Indices           []indexRow
	IdxErr            string
	Tasks             []controlapi.Task
	TasksErr          string
	Protected         *controlapi.Protection
	ProtErr           string
	Filter            string
	Preview           *preview
	PrevErr           string
	Policy            *policyView
	PolicyErr         string
}

// previewRows bounds the row preview: enough to look at, small enough to render at once.
const previewRows = 25

func (c *Console) table(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	id := c.splitID(r.URL.Query().Get("id"))
	d := tableData{base: c.base(ctx, r, s, "Table "+strings.Join(id, c.delim)), ID: id, Filter: r.URL.Query().Get("filter")}
	if len(id) == 0 {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	p := "/v1/table/" + c.idPath(id)
	// The describe decides what the caller learns: refused here, the page says what the API
	// said and asks nothing more.
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/describe", map[string]any{"load_detailed_metadata": true}, &d.Desc); err != nil {
		d.Err = c.errText(err)
		c.render(w, "table", d)
		return
	}
	var st nsapi.GetTableStatsResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/stats", map[string]any{}, &st); err != nil {
		d.StatsErr = c.sectionErr(err)
	} else {
		d.Stats = &st
	}
	c.versions(ctx, r, s, p, &d)
	var il nsapi.ListTableIndicesResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/index/list", map[string]any{}, &il); err != nil {
		d.IdxErr = c.sectionErr(err)
	}
	for _, ix := range il.Indexes {
		row := indexRow{IndexContent: ix, Indexed: derefInt(ix.NumIndexedRows), Unindexed: derefInt(ix.NumUnindexedRows)}
		if ix.NumIndexedRows == nil {
			// The list did not say: the index's stats door does.
			var is nsapi.DescribeTableIndexStatsResponse
			if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/index/"+url.PathEscape(ix.IndexName)+"/stats", map[string]any{}, &is); err == nil {
				row.Indexed, row.Unindexed = derefInt(is.NumIndexedRows), derefInt(is.NumUnindexedRows)
			}
		}
		row.Coverage = percent(row.Indexed, row.Indexed+row.Unindexed)
		d.Indices = append(d.Indices, row)
	}
	var tl controlapi.TaskList
	if err := c.callJSON(ctx, r, s, http.MethodGet, p+"/tasks"+c.delimQuery("?"), nil, &tl); err != nil {
		if !notOffered(err) {
			d.TasksErr = c.sectionErr(err)
		}
	}
	d.Tasks = tl.Tasks
	pv, err := c.describePolicy(ctx, r, s, "table", id)
	d.Policy, d.PolicyErr = pv, c.errText(err)
	var prot controlapi.Protection
	if err := c.callJSON(ctx, r, s, http.MethodGet, p+"/protection"+c.delimQuery("?"), nil, &prot); err != nil {
		d.ProtErr = c.sectionErr(err)
	} else {
		d.Protected = &prot
	}
	// The row preview is the query door's Arrow answer, decoded here.
	q := map[string]any{"k": previewRows}
	if d.Filter != "" {
		q["filter"] = d.Filter
	}
	if b, err := c.call(ctx, r, s, http.MethodPost, p+"/query", q); err != nil {
		d.PrevErr = c.errText(err)
	} else if pv, err := decodePreview(b, previewRows); err != nil {
		d.PrevErr = "the query's Arrow answer did not decode: " + err.Error()
	} else {
		d.Preview = pv
	}
	c.render(w, "table", d)
}

// versions fills the timeline: a page of versions, newest first, each with the operation that
// made it (history.go), the tags pointing at it and the branches forked from it.
func (c *Console) versions(ctx context.Context, r *http.Request, s session, p string, d *tableData) {
	q := url.Values{"descending": {"true"}, "limit": {strconv.Itoa(versionPage)}}
	if tok := r.URL.Query().Get("versions_from"); tok != "" {
		q.Set("page_token", tok)
		d.VerFirst = Prefix + "/table?id=" + url.QueryEscape(strings.Join(d.ID, c.delim))
	}
	if c.delim != "$" {
		q.Set("delimiter", c.delim)
	}
	var vl nsapi.ListTableVersionsResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/version/list?"+q.Encode(), map[string]any{}, &vl); err != nil {
		d.VerErr = c.sectionErr(err)
		return
	}
	if vl.PageToken != nil && *vl.PageToken != "" {
		d.VerNext = Prefix + "/table?id=" + url.QueryEscape(strings.Join(d.ID, c.delim)) + "&versions_from=" + url.QueryEscape(*vl.PageToken)
	}
	tags := map[int64][]string{}
	var tl nsapi.ListTableTagsResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/tags/list", map[string]any{}, &tl); err == nil {
		for name, t := range tl.Tags {
			if t.Branch == nil || *t.Branch == "" || *t.Branch == "main" {
				tags[t.Version] = append(tags[t.Version], name)
			}
		}
	}
	branches := map[int64][]string{}
	var bl nsapi.ListTableBranchesResponse
	if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/branches/list", map[string]any{}, &bl); err == nil {
		for name, b := range bl.Branches {
			d.Branches = append(d.Branches, name)
			if b.ParentBranch == nil || *b.ParentBranch == "" || *b.ParentBranch == "main" {
				branches[b.ParentVersion] = append(branches[b.ParentVersion], name)
			}
		}
		sort.Strings(d.Branches)
	}
	nums := make([]int64, len(vl.Versions))
	for i, v := range vl.Versions {
		nums[i] = v.Version
	}
	ops, err := c.operations(ctx, r, s, p, d, nums)
	if err != nil {
		d.OpsErr = "operation names: " + err.Error()
	}
	current := derefInt(d.Desc.Version)
	for _, v := range vl.Versions {
		row := versionRow{Version: v.Version, Operation: ops[v.Version], Tags: tags[v.Version], Branches: branches[v.Version], Current: v.Version == current}
		if v.TimestampMillis != nil {
			row.At = formatMillis(*v.TimestampMillis)
		}
		sort.Strings(row.Tags)
		sort.Strings(row.Branches)
		d.Versions = append(d.Versions, row)
	}
	sort.Slice(d.Versions, func(i, j int) bool { return d.Versions[i].Version > d.Versions[j].Version })
}

// operations names the operations of versions, from the table's location as described (with
// vended credentials asked for when it is on S3).
func (c *Console) operations(ctx context.Context, r *http.Request, s session, p string, d *tableData, versions []int64) (map[int64]string, error) {
	loc := deref(d.Desc.Location)
	if loc == "" || len(versions) == 0 {
		return map[int64]string{}, nil
	}
	opts := deref(d.Desc.StorageOptions)
	if strings.HasPrefix(loc, "s3") && len(opts) == 0 {
		var vended nsapi.DescribeTableResponse
		if err := c.callJSON(ctx, r, s, http.MethodPost, p+"/describe", map[string]any{"vend_credentials": true}, &vended); err == nil {
			opts = deref(vended.StorageOptions)
		}
	}
	return operationNames(ctx, loc, opts, versions)
}

// ---- warehouses ------------------------------------------------------------------------------

type warehousesData struct {
	base
	Warehouses []controlapi.Warehouse
	Err        string
}

func (c *Console) warehouses(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	d := warehousesData{base: c.base(ctx, r, s, "Warehouses")}
	var wl controlapi.WarehouseList
	if err := c.callJSON(ctx, r, s, http.MethodGet, "/v1/warehouses", nil, &wl); err != nil {
		d.Err = c.errText(err)
	}
	d.Warehouses = wl.Warehouses
	c.render(w, "warehouses", d)
}

// ---- events ----------------------------------------------------------------------------------

type eventsData struct {
	base
	Events []eventRow
	Cursor string
	Err    string
}

type eventRow struct {
	Cursor, At, Type, Object, Actor, Attrs string
}

// shownEvents is how many of the newest events the page opens with.
const shownEvents = 100

func toRows(evs []controlapi.Event) []eventRow {
	out := make([]eventRow, 0, len(evs))
	for _, e := range evs {
		row := eventRow{Cursor: e.Cursor, At: e.At.UTC().Format(time.DateTime), Type: e.Type, Object: deref(e.Object), Actor: deref(e.Actor)}
		if e.Attributes != nil {
			keys := make([]string, 0, len(*e.Attributes))
			for k := range *e.Attributes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = k + "=" + (*e.Attributes)[k]
			}
			row.Attrs = strings.Join(parts, " ")
		}
		out = append(out, row)
	}
	return out
}

// readEvents follows the journal from since to its end (bounded), keeping the newest keep.
func (c *Console) readEvents(ctx context.Context, r *http.Request, s session, since string, keep int) ([]eventRow, string, error) {
	var rows []eventRow
	cursor := since
	for range 50 {
		q := "/v1/events?limit=500"
		if cursor != "" {
			q += "&since=" + url.QueryEscape(cursor)
		}
		var el controlapi.EventList
		if err := c.callJSON(ctx, r, s, http.MethodGet, q, nil, &el); err != nil {
			return nil, cursor, err
		}
		rows = append(rows, toRows(el.Events)...)
		if len(rows) > keep {
			rows = rows[len(rows)-keep:]
		}
		if el.Cursor == "" || el.Cursor == cursor || len(el.Events) == 0 {
			break
		}
		cursor = el.Cursor
	}
	slices.Reverse(rows) // newest first
	return rows, cursor, nil
}

func (c *Console) events(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	d := eventsData{base: c.base(ctx, r, s, "Events")}
	rows, cursor, err := c.readEvents(ctx, r, s, "", shownEvents)
	d.Events, d.Cursor, d.Err = rows, cursor, c.errText(err)
	c.render(w, "events", d)
}

// eventsPoll answers the events after since, for the page's script to prepend (JSON, escaped by
// the script as text).
func (c *Console) eventsPoll(w http.ResponseWriter, r *http.Request, s session) {
	rows, cursor, err := c.readEvents(r.Context(), r, s, r.URL.Query().Get("since"), shownEvents)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		writeJSONTo(w, map[string]string{"error": c.errText(err)})
		return
	}
	if rows == nil {
		rows = []eventRow{}
	}
	writeJSONTo(w, map[string]any{"events": rows, "cursor": cursor})
}

// ---- actions ---------------------------------------------------------------------------------

// action performs one form's change through its door, then returns to the page it came from
// with what happened (Post/Redirect/Get, so a reload never repeats it).
func (c *Console) action(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	f := func(k string) string { return r.PostFormValue(k) }
	back := localNext(f("back"))
	id := c.splitID(f("id"))
	var err error
	var done string
	switch r.PathValue("action") {
	case "protect":
		on := f("protected") == "true"
		kind := f("kind")
		if kind != "table" && kind != "namespace" {
			err = &apiError{Status: http.StatusBadRequest, Title: "protect: kind must be table or namespace"}
			break
		}
		err = c.callJSON(ctx, r, s, http.MethodPost, "/v1/"+kind+"/"+c.idPath(id)+"/protection"+c.delimQuery("?"), controlapi.SetProtectionRequest{Protected: on}, nil)
		done = fmt.Sprintf("%s %s protected: %v", kind, f("id"), on)
	case "grant", "revoke":
		g := controlapi.AccessGrant{ObjectType: controlapi.AccessGrantObjectType(f("type")), ObjectId: f("id"),
			Subject: strings.TrimSpace(f("subject")), Relation: f("relation")}
		if c.delim != "$" {
			g.Delimiter = &c.delim
		}
		err = c.callJSON(ctx, r, s, http.MethodPost, "/v1/access/"+r.PathValue("action"), g, nil)
		done = fmt.Sprintf("%sed %s %s on %s %s", r.PathValue("action"), g.Subject, g.Relation, g.ObjectType, g.ObjectId)
		done = strings.Replace(done, "revokeed", "revoked", 1)
	case "drop":
		err = c.callJSON(ctx, r, s, http.MethodPost, "/v1/table/"+c.idPath(id)+"/drop", map[string]any{}, nil)
		done = "dropped table " + f("id")
		if err == nil && len(id) > 1 {
			back = Prefix + "/namespace?id=" + url.QueryEscape(strings.Join(id[:len(id)-1], c.delim))
		}
	case "undrop":
		kind := f("kind")
		if kind != "table" && kind != "namespace" {
			err = &apiError{Status: http.StatusBadRequest, Title: "undrop: kind must be table or namespace"}
			break
		}
		err = c.callJSON(ctx, r, s, http.MethodPost, "/v1/"+kind+"/"+c.idPath(id)+"/undrop"+c.delimQuery("?"), nil, nil)
		done = "restored " + kind + " " + f("id")
	case "activate", "deactivate":
		wh := f("warehouse")
		err = c.callJSON(ctx, r, s, http.MethodPost, "/v1/warehouses/"+url.PathEscape(wh)+"/"+r.PathValue("action"), nil, nil)
		done = r.PathValue("action") + "d warehouse " + wh
	default:
		http.Error(w, "no such action", http.StatusNotFound)
		return
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	// Drop any flash the page already carried.
	if u, perr := url.Parse(back); perr == nil {
		q := u.Query()
		q.Del("flash")
		q.Del("error")
		u.RawQuery = q.Encode()
		back, sep = u.String(), "?"
		if u.RawQuery != "" {
			sep = "&"
		}
	}
	if err != nil {
		http.Redirect(w, r, back+sep+"error="+url.QueryEscape(c.errText(err)), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, back+sep+"flash="+url.QueryEscape(done), http.StatusSeeOther)
}
