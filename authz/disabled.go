package authz

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
)

// Disabled is the authorizer while authorization is off (the embedded default): every caller is an
// anonymous estate admin and every check passes. It still refuses a door without a rule and an
// object of the wrong type, so a handler's mistake fails in the default configuration too instead
// of only once OpenFGA is switched on.
type Disabled struct{}

func (Disabled) Enabled() bool { return false }

func (Disabled) Check(_ context.Context, _ Principal, action Action, object Object) error {
	_, err := ruleFor(action, object)
	return err
}

func (Disabled) Filter(_ context.Context, _ Principal, action Action, objects []Object) ([]Object, error) {
	for _, o := range objects {
		if _, err := ruleFor(action, o); err != nil {
			return nil, err
		}
	}
	return objects, nil
}

// SeedCreate and RevokeAll have nothing to record: lifecycle code calls them unconditionally.
func (Disabled) SeedCreate(context.Context, Principal, Object, Object) error { return nil }
func (Disabled) RevokeAll(context.Context, Object) ([]Tuple, error)          { return nil, nil }

// Grant and Revoke are refused rather than ignored: a caller told "granted" would believe it.
func (Disabled) Grant(context.Context, Subject, string, Object) error {
	return nserr.Unsupportedf("authorization is off: there are no grants to change")
}

func (Disabled) Revoke(context.Context, Subject, string, Object) error {
	return nserr.Unsupportedf("authorization is off: there are no grants to change")
}
