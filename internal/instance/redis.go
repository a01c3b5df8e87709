package instance

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// initRedis finds redis-server and makes the directory that holds its
// configuration and its append-only file.
func (s *Server) initRedis(ctx context.Context, opts Options) error {
	if opts.Bindir != "" {
		s.server = firstCommand(filepath.Join(opts.Bindir, "redis-server"))
		if s.server == "" {
			return badinput.New("%w: no redis-server in %s; install the Debian package redis-server or name the directory that holds it", ErrNotInstalled, opts.Bindir)
		}
	} else if s.server = firstCommand("redis-server", "/usr/bin/redis-server"); s.server == "" {
		return badinput.New("%w: redis-server not found on PATH or in /usr/bin; install the Debian package redis-server", ErrNotInstalled)
	}
	out, err := exec.CommandContext(ctx, s.server, "--version").Output()
	if err != nil {
		return fmt.Errorf("instance: %s --version: %w", s.server, err)
	}
	s.version = redisVersion(string(out))
	s.dir, err = makeDir("dbprobe-redis-")
	if err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	s.args = []string{filepath.Join(s.dir, "redis.conf")}
	if opts.DataDir == "" {
		s.dataDir = s.dir
		return nil
	}
	return s.makeDataDir(opts)
}

var redisVersionPattern = regexp.MustCompile(`v=(\d+\.\d+\.\d+)`)

// redisVersion reads "Redis server v=7.0.15 sha=…" as "Redis 7.0.15".
func redisVersion(out string) string {
	if m := redisVersionPattern.FindStringSubmatch(out); m != nil {
		return "Redis " + m[1]
	}
	return strings.TrimSpace(out)
}

// configureRedis writes redis.conf: loopback only, the port, the password
// (in the file, readable by its owner alone, never on a command line) and
// an append-only file synced every second, as Redis ships it; then the
// extra settings, one directive each.
func (s *Server) configureRedis(settings map[string]string) error {
	lines := []string{
		"bind " + s.addr,
		"protected-mode yes",
		"port " + strconv.Itoa(s.port),
		"dir " + s.dataDir,
		"requirepass " + s.password,
		"appendonly yes",
		"appendfsync everysec",
		`save ""`,
		"logfile " + filepath.Join(s.dir, "server.log"),
	}
	for _, k := range sortedSettings(settings) {
		lines = append(lines, k+" "+settings[k])
	}
	return os.WriteFile(s.args[0], []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// pingRedis succeeds once the server answers PING with the password.
func (s *Server) pingRedis(ctx context.Context) error {
	c, err := redis.DialContext(ctx, "tcp", net.JoinHostPort(s.addr, strconv.Itoa(s.port)), redis.DialPassword(s.password))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = redis.DoContext(c, ctx, "PING")
	return err
}
