package catalog

import (
	"strings"

	"github.com/lancecat/lancecat/ident"
)

// ListedDelimiter joins the parts of each full table id ListAllTables answers (the directory
// namespace's manifest spelling, whatever delimiter a server's clients use; the page token is
// one of these names).
const ListedDelimiter = "$"

// ListedID is the id of a name ListAllTables answered.
func ListedID(name string) ident.ID { return ident.ID(strings.Split(name, ListedDelimiter)) }
