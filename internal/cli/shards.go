package cli

import (
	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/shard"
)

// shardOptions are the flags that spread the table over several databases.
type shardOptions struct {
	shards     []string
	shardsFile string
}

// addShardFlags adds --shard and --shards-file to a YCSB command.
func addShardFlags(cmd *cobra.Command, o *shardOptions) {
	f := cmd.Flags()
	f.StringArrayVar(&o.shards, "shard", nil, "spread the table over several databases by record number, one --shard URL per database (instead of --db): an even split in the order given, or URL@FIRST-LAST with explicit record ranges (LAST may be left out); add ' read=REPLICA_URL' to send the run's reads and scans to a replica of that shard; see docs/shards.md")
	f.StringVar(&o.shardsFile, "shards-file", "", "read the --shard values from FILE, one per line (# starts a comment)")
	setGroup(f, groupTarget, "shard", "shards-file")
}

// redactShard shows a --shard value with its URL's password hidden.
func redactShard(value string) string {
	sp, err := shard.ParseSpec(value)
	if err != nil {
		return driver.RedactURL(value)
	}
	out := driver.RedactURL(sp.URL)
	if sp.Bounded {
		out += "@" + shard.Range{First: sp.First, Last: sp.Last}.String()
	}
	if sp.Read != "" {
		out += " read=" + driver.RedactURL(sp.Read)
	}
	return out
}
