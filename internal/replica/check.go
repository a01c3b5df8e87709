package replica

import (
	"context"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Pair is a primary and its replica, checked to be what they are said to
// be.
type Pair struct {
	Primary, Replica driver.Replicated
}

// Check asks both servers what they are and refuses, as bad input that
// names what is wrong, a replica that is the primary itself, that is not
// a replica, or that replicates another server, and a primary that is a
// replica itself. It only reads: nothing is written to either server.
// primaryURL and replicaURL are the URLs as the messages show them, their
// passwords hidden.
func Check(ctx context.Context, primary, replica driver.DB, primaryURL, replicaURL string) (Pair, error) {
	p, ok := primary.(driver.Replicated)
	pi, ri := primary.Info(), replica.Info()
	if pi.Driver != ri.Driver {
		return Pair{}, badinput.New("--read-db %s is a %s database and --db %s a %s one; give a replica of the --db database",
			replicaURL, name(ri), primaryURL, name(pi))
	}
	if !ok {
		return Pair{}, badinput.New("--read-db: the %s driver cannot check or measure a replica (no heartbeat, no replication role); leave --read-db out", pi.Driver)
	}
	r := replica.(driver.Replicated)
	pr, err := p.Role(ctx)
	if err != nil {
		return Pair{}, err
	}
	rr, err := r.Role(ctx)
	if err != nil {
		return Pair{}, err
	}
	switch {
	case rr.Instance == pr.Instance:
		return Pair{}, badinput.New("--read-db %s is the primary itself: it reaches the same server as --db %s; give the URL of a replica of it", replicaURL, primaryURL)
	case pr.Replica:
		return Pair{}, badinput.New("--db %s is itself a replica (%s), and updates and inserts must go to the primary; give the primary as --db and its replica as --read-db", primaryURL, pr.Evidence)
	case !rr.Replica:
		return Pair{}, badinput.New("--read-db %s is not a replica (%s); give the URL of a replica of --db %s", replicaURL, rr.Evidence, primaryURL)
	case rr.Upstream != "" && rr.Upstream != pr.Identity:
		return Pair{}, badinput.New("--read-db %s replicates another server (its source is %s, and --db %s is %s); give a replica of the --db server", replicaURL, rr.Upstream, primaryURL, pr.Identity)
	}
	return Pair{Primary: p, Replica: r}, nil
}

// name is how messages name a database: its product, or its driver.
func name(i driver.Info) string {
	if i.Product != "" {
		return i.Product
	}
	return i.Driver
}
