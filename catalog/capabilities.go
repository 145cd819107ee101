package catalog

// IndexTyper is a catalog that says which index types create_table_index builds in it (what GET
// /v1/capabilities reports). It is an optional capability, as iceberg-go's optional interfaces
// are: the directory namespace answers it, the router and the governed decorator pass it on, and
// a catalog without it names none.
type IndexTyper interface {
	IndexTypes() []string
}

// IndexTypes are the index types c builds, sorted; none when c does not say (or is nil).
func IndexTypes(c Catalog) []string {
	if t, ok := c.(IndexTyper); ok {
		return t.IndexTypes()
	}
	return []string{}
}
