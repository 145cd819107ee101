// Package docs holds lancecat's documentation for people (Markdown); its tests keep it honest:
// every relative link resolves, nothing links outside the repository, and every code block is
// either a file a test runs or marked as text no test runs (docs/contributing.md, "Docs").
package docs
