package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// numberWants says what a flag wants, by the strconv function that
// refused its value.
var numberWants = map[string]string{
	"ParseInt":   "not a whole number",
	"ParseUint":  "not a whole number",
	"Atoi":       "not a whole number",
	"ParseFloat": "not a number",
	"ParseBool":  "not true or false",
}

// describeFlagError rewrites pflag's message for a value of the wrong
// kind ("strconv.ParseInt: parsing "one": invalid syntax") into what
// the flag wants; other errors pass through unchanged.
func describeFlagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	want, ok := flagWant(errors.Unwrap(bad))
	if !ok {
		return err
	}
	return fmt.Errorf("--%s %q: %s", bad.GetFlag().Name, bad.GetValue(), want)
}

// flagWant names what was wrong with a value from the error its flag's
// parser returned, or says it cannot (ok false).
func flagWant(cause error) (want string, ok bool) {
	if cause == nil {
		return "", false
	}
	var num *strconv.NumError
	if errors.As(cause, &num) {
		if errors.Is(num.Err, strconv.ErrRange) {
			return "out of range", true
		}
		want, ok = numberWants[num.Func]
		return want, ok
	}
	if strings.HasPrefix(cause.Error(), "time: ") {
		return "not a duration (for example 500ms, 30s, 5m)", true
	}
	return "", false
}
