package app

import (
	"flag"
	"strconv"
	"time"
)

// binder registers settings on a flag set, each with its LANCECAT_* environment variable as the
// flag's default (a flag given on the command line beats the environment). A variable that does
// not parse is collected in errs (Config.BindFlags' caller reports them after parsing) and
// leaves the setting at its type's zero value.
type binder struct {
	fs   *flag.FlagSet
	env  envLookup
	errs *EnvErrors
}

// fromEnv sets *p from the variable envName, when set, through parse.
func fromEnv[T any](b binder, p *T, envName string, parse func(string) (T, error)) {
	v, ok := b.env(envName)
	if !ok {
		return
	}
	x, err := parse(v)
	if err != nil {
		b.errs.add(envName, v, err)
	}
	*p = x
}

// usage is a flag's help text naming its variable.
func usage(text, envName string) string { return text + " (env " + envName + ")" }

func (b binder) str(p *string, name, envName, text string) {
	fromEnv(b, p, envName, func(s string) (string, error) { return s, nil })
	b.fs.StringVar(p, name, *p, usage(text, envName))
}

func (b binder) boolean(p *bool, name, envName, text string) {
	fromEnv(b, p, envName, strconv.ParseBool)
	b.fs.BoolVar(p, name, *p, usage(text, envName))
}

func (b binder) integer(p *int, name, envName, text string) {
	fromEnv(b, p, envName, strconv.Atoi)
	b.fs.IntVar(p, name, *p, usage(text, envName))
}

func (b binder) int64(p *int64, name, envName, text string) {
	fromEnv(b, p, envName, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	b.fs.Int64Var(p, name, *p, usage(text, envName))
}

func (b binder) duration(p *time.Duration, name, envName, text string) {
	fromEnv(b, p, envName, time.ParseDuration)
	b.fs.DurationVar(p, name, *p, usage(text, envName))
}
