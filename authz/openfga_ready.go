package authz

import "context"

// Ready asks the OpenFGA server for the model this authorizer is pinned to: the cheapest request
// that proves the server answers and still holds our store. /readyz calls it.
func (f *OpenFGA) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if _, _, err := f.api.OpenFgaApi.ReadAuthorizationModel(ctx, f.store.ID, f.store.ModelID).Execute(); err != nil {
		return unavailable(ctx, "reading the authorization model", err)
	}
	return nil
}

// GrantEstateAdmin makes principal an estate admin (admin on the Catalog): it may mint projects,
// read the event stream and administer raw access. Granting what is held is a no-op.
func GrantEstateAdmin(ctx context.Context, a Authorizer, principal Principal) error {
	if err := principal.validate(); err != nil {
		return err
	}
	return a.Grant(ctx, principal.Subject(), "admin", Catalog)
}
