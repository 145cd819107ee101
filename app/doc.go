// Package app is lancecat's composition root: the settings of `lancecat serve` (Config, its flags
// and LANCECAT_* variables), and the wiring that turns them into a serving catalog — the roots,
// the router over the Lance directory namespaces, governance (identity, authorization, the
// lifecycle service, the trash, webhooks), the governed catalog behind the spec doors, the
// maintenance service, credential vending — handed to package server, which only serves HTTP.
// The operator commands (`lancecat trash`, `maintenance`, `admin`, `apikey`) open the same parts
// without serving (OpenTrash, OpenMaintenance, OpenAuthorizer, OpenControlRoot).
//
// The shape is openfga's cmd/run (wiring) beside pkg/server (serving): server imports no part
// of this package, and what a deployment adds (a listener's TLS, telemetry, a version) lands as
// settings here and as serving in server.
package app
