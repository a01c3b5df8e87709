package postgres

import "strings"

// urlSetting returns the value the URL gives a server setting, and whether
// it gives one. pgx passes the URL's unknown parameters to the server as
// startup parameters (?synchronous_commit=off), and the options parameter
// (?options=-c%20synchronous_commit=off) holds command-line switches the
// server applies before those; a setting given both ways takes the
// parameter's value, so that is looked at first. Setting names compare
// without case, as the server's do.
func urlSetting(params map[string]string, name string) (string, bool) {
	for k, v := range params {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	for k, v := range params {
		if strings.EqualFold(k, "options") {
			return optionsSetting(v, name)
		}
	}
	return "", false
}

// optionsSetting finds a setting in the server's command-line switches as
// the options startup parameter carries them: "-c name=value",
// "-cname=value" or "--name=value", separated by white space, where a
// backslash keeps the next character (a space in a value). In a name, "-"
// stands for "_". The last switch for the name wins, as on the server.
func optionsSetting(options, name string) (string, bool) {
	args := splitOptions(options)
	value, found := "", false
	for i := 0; i < len(args); i++ {
		var assignment string
		switch a := args[i]; {
		case a == "-c":
			if i+1 >= len(args) {
				continue
			}
			i++
			assignment = args[i]
		case strings.HasPrefix(a, "--"):
			assignment = a[2:]
		case strings.HasPrefix(a, "-c"):
			assignment = a[2:]
		default:
			continue
		}
		k, v, ok := strings.Cut(assignment, "=")
		if !ok {
			continue
		}
		if strings.EqualFold(strings.ReplaceAll(k, "-", "_"), name) {
			value, found = v, true
		}
	}
	return value, found
}

// splitOptions splits the options parameter the way the server does
// (pg_split_opts): at runs of white space, a backslash taking the next
// character literally.
func splitOptions(s string) []string {
	var out []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inArg = true
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}
