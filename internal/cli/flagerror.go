package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// describeFlagError rewrites pflag's message for a value of the wrong
// kind ("strconv.ParseInt: parsing "one": invalid syntax") into what
// the flag wants; other errors pass through unchanged.
func describeFlagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	name := "--" + bad.GetFlag().Name
	want := ""
	var num *strconv.NumError
	switch {
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		want = "out of range"
	case errors.As(err, &num) && (num.Func == "ParseInt" || num.Func == "ParseUint" || num.Func == "Atoi"):
		want = "not a whole number"
	case errors.As(err, &num) && num.Func == "ParseFloat":
		want = "not a number"
	case errors.As(err, &num) && num.Func == "ParseBool":
		want = "not true or false"
	case strings.HasPrefix(errors.Unwrap(bad).Error(), "time: "):
		want = "not a duration (for example 500ms, 30s, 5m)"
	default:
		return err
	}
	return fmt.Errorf("%s %q: %s", name, bad.GetValue(), want)
}
