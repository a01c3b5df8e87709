package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/dbprobe/dbprobe/internal/driver"
)

var (
	_ driver.ConnectionLimiter = (*DB)(nil)
	_ driver.DataLocator       = (*DB)(nil)
)

// ConnectionRoom implements driver.ConnectionLimiter: maxclients, which
// Redis keeps nothing back from, and connected_clients, every client's
// connections (replicas' are not counted, nor limited). A server whose
// CONFIG command is renamed away, or refused by the user's ACL, answers
// with an error: the caller takes the room as unknown.
func (db *DB) ConnectionRoom(ctx context.Context) (driver.ConnectionRoom, error) {
	cfg, err := db.config(ctx, "maxclients")
	if err != nil {
		return driver.ConnectionRoom{}, fmt.Errorf("redis: read maxclients: %w", classify(err))
	}
	maxClients, err := strconv.Atoi(cfg["maxclients"])
	if err != nil {
		return driver.ConnectionRoom{}, fmt.Errorf("redis: maxclients %q is not a number", cfg["maxclients"])
	}
	clients, err := db.infoSection(ctx, "clients")
	if err != nil {
		return driver.ConnectionRoom{}, fmt.Errorf("redis: read INFO clients: %w", classify(err))
	}
	inUse, err := strconv.Atoi(clients["connected_clients"])
	if err != nil {
		return driver.ConnectionRoom{}, fmt.Errorf("redis: INFO clients has no connected_clients")
	}
	return driver.ConnectionRoom{Max: maxClients, InUse: inUse, Setting: "maxclients"}, nil
}

// DataDirectory implements driver.DataLocator: the directory Redis writes
// its RDB snapshots and append-only file to (CONFIG GET dir), whose full
// disk is what MISCONF reports; "" when CONFIG is refused or renamed.
func (db *DB) DataDirectory(ctx context.Context) (string, error) {
	cfg, err := db.config(ctx, "dir")
	if err != nil {
		if _, ok := serverCode(err); ok {
			return "", nil // NOPERM, or ERR unknown command: the server will not say
		}
		return "", fmt.Errorf("redis: read dir: %w", classify(err))
	}
	return cfg["dir"], nil
}
