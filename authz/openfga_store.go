package authz

import (
	"context"
	"encoding/json"

	openfga "github.com/openfga/go-sdk"

	nserr "github.com/lancecat/lancecat/errors"
)

// EnsureStore makes the store named storeName exist on the OpenFGA server at url, with our model
// (model.fga) as a model of it, and returns both ids. Every replica runs it at startup: an existing
// store of that name is reused, and so is its latest model when it means the same as ours;
// otherwise our model is written as the new latest.
//
// Replicas starting together may each create a store; all of them then settle on the oldest one of
// that name and delete their own extra, so they end up sharing one store.
func EnsureStore(ctx context.Context, url, storeName string, opts ...Option) (Store, error) {
	if l := len(storeName); l < 3 || l > 64 {
		// OpenFGA's own bounds on a store name.
		return Store{}, nserr.InvalidInputf("OpenFGA store name %q must be 3 to 64 characters", storeName)
	}
	o := buildOptions(opts)
	api, err := newAPIClient(url, o)
	if err != nil {
		return Store{}, err
	}
	s := storeSetup{api: api, o: o}
	id, err := s.store(ctx, storeName)
	if err != nil {
		return Store{}, err
	}
	modelID, err := s.model(ctx, id)
	if err != nil {
		return Store{}, err
	}
	return Store{ID: id, ModelID: modelID}, nil
}

// OpenStore is EnsureStore for admin commands: a store of that name must exist already (the
// servers made it), so a mistyped --openfga-store is an error rather than a fresh empty store in
// which every grant looks absent and every revocation looks done.
func OpenStore(ctx context.Context, url, storeName string, opts ...Option) (Store, error) {
	o := buildOptions(opts)
	api, err := newAPIClient(url, o)
	if err != nil {
		return Store{}, err
	}
	s := storeSetup{api: api, o: o}
	id, err := s.oldestNamed(ctx, storeName)
	if err != nil {
		return Store{}, err
	}
	if id == "" {
		return Store{}, nserr.NamespaceNotFoundf("OpenFGA at %s has no store named %q: is it the one the servers use (--openfga-store)?", url, storeName)
	}
	// The servers' model, as they left it: an admin command of another version must not make
	// its own model the latest.
	var latest openfga.ReadAuthorizationModelsResponse
	err = s.call(ctx, "reading the authorization models", func(ctx context.Context) (err error) {
		latest, _, err = s.api.OpenFgaApi.ReadAuthorizationModels(ctx, id).PageSize(1).Execute()
		return err
	})
	if err != nil {
		return Store{}, err
	}
	if len(latest.AuthorizationModels) == 0 {
		return Store{}, nserr.NamespaceNotFoundf("OpenFGA store %q at %s has no authorization model yet: start a server on it first", storeName, url)
	}
	return Store{ID: id, ModelID: latest.AuthorizationModels[0].Id}, nil
}

type storeSetup struct {
	api *openfga.APIClient
	o   options
}

func (s storeSetup) store(ctx context.Context, name string) (string, error) {
	if id, err := s.oldestNamed(ctx, name); err != nil || id != "" {
		return id, err
	}
	var created openfga.CreateStoreResponse
	err := s.call(ctx, "creating store "+name, func(ctx context.Context) (err error) {
		created, _, err = s.api.OpenFgaApi.CreateStore(ctx).Body(openfga.CreateStoreRequest{Name: name}).Execute()
		return err
	})
	if err != nil {
		return "", err
	}
	winner, err := s.oldestNamed(ctx, name)
	if err != nil {
		return "", err
	}
	if winner != created.Id {
		// Another replica's store is older: use it and retire ours (best effort, it holds nothing).
		_ = s.call(ctx, "deleting a duplicate store", func(ctx context.Context) error {
			_, err := s.api.OpenFgaApi.DeleteStore(ctx, created.Id).Execute()
			return err
		})
	}
	return winner, nil
}

// oldestNamed returns the id of the oldest store called name, or "".
func (s storeSetup) oldestNamed(ctx context.Context, name string) (string, error) {
	var best *openfga.Store
	token := ""
	for {
		var page openfga.ListStoresResponse
		err := s.call(ctx, "listing stores", func(ctx context.Context) (err error) {
			req := s.api.OpenFgaApi.ListStores(ctx).PageSize(100)
			if token != "" {
				req = req.ContinuationToken(token)
			}
			page, _, err = req.Execute()
			return err
		})
		if err != nil {
			return "", err
		}
		for _, st := range page.Stores {
			if st.Name != name || st.DeletedAt != nil {
				continue
			}
			if best == nil || st.CreatedAt.Before(best.CreatedAt) ||
				(st.CreatedAt.Equal(best.CreatedAt) && st.Id < best.Id) {
				best = &st
			}
		}
		if page.ContinuationToken == "" || page.ContinuationToken == token || len(page.Stores) == 0 {
			break
		}
		token = page.ContinuationToken
	}
	if best == nil {
		return "", nil
	}
	return best.Id, nil
}

func (s storeSetup) model(ctx context.Context, storeID string) (string, error) {
	var latest openfga.ReadAuthorizationModelsResponse
	err := s.call(ctx, "reading the authorization models", func(ctx context.Context) (err error) {
		latest, _, err = s.api.OpenFgaApi.ReadAuthorizationModels(ctx, storeID).PageSize(1).Execute()
		return err
	})
	if err != nil {
		return "", err
	}
	if len(latest.AuthorizationModels) > 0 {
		m := latest.AuthorizationModels[0]
		same, err := sameAsOurs(openfga.WriteAuthorizationModelRequest{
			TypeDefinitions: m.TypeDefinitions, SchemaVersion: m.SchemaVersion, Conditions: m.Conditions,
		})
		if err != nil {
			return "", err
		}
		if same {
			return m.Id, nil
		}
	}
	var written openfga.WriteAuthorizationModelResponse
	err = s.call(ctx, "writing the authorization model", func(ctx context.Context) (err error) {
		written, _, err = s.api.OpenFgaApi.WriteAuthorizationModel(ctx, storeID).Body(theModel.request).Execute()
		return err
	})
	if err != nil {
		return "", err
	}
	return written.AuthorizationModelId, nil
}

// call runs one OpenFGA request under the request timeout and types its failure.
func (s storeSetup) call(ctx context.Context, doing string, do func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := do(ctx); err != nil {
		return unavailable(ctx, doing, err)
	}
	return nil
}

// sameAsOurs compares through the SDK's types on both sides, so fields this SDK does not know
// cannot make two equal models look different.
func sameAsOurs(stored openfga.WriteAuthorizationModelRequest) (bool, error) {
	a, err := json.Marshal(stored)
	if err != nil {
		return false, nserr.Internalf("encoding the stored model: %w", err)
	}
	b, err := json.Marshal(theModel.request)
	if err != nil {
		return false, nserr.Internalf("encoding our model: %w", err)
	}
	same, err := sameModel(a, b)
	if err != nil {
		return false, nserr.Internalf("comparing models: %w", err)
	}
	return same, nil
}
