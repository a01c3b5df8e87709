package redis_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// selfSigned writes a certificate for 127.0.0.1 that nothing trusts, and
// its key, into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "dbprobe test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLS opens rediss:// URLs on a private server with a TLS port beside
// its plain one.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tlsPort := closedPort(t)
	plain := testdb.StartRedis(t, "--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no")
	u, err := url.Parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	tlsURL := *u
	tlsURL.Scheme = "rediss"
	tlsURL.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
	password := passwordOf(t, plain)

	t.Run("trusted by skip_verify", func(t *testing.T) {
		v := tlsURL
		v.RawQuery = "skip_verify=true"
		db, err := drivertest.OpenURL(t, v.String(), "", driver.Options{Sessions: 1})
		if err != nil {
			t.Fatalf("Open over TLS: %v", err)
		}
		defer db.Close()
		if db.Info().ServerVersion == "" {
			t.Errorf("Info over TLS = %+v", db.Info())
		}
	})
	for _, tc := range []struct{ name, url, want string }{
		{"an untrusted certificate", tlsURL.String(),
			fmt.Sprintf("cannot open a TLS connection to Redis at 127.0.0.1:%d: ", tlsPort)},
		// A plain server waits for the end of a command line that never
		// comes: the dial timeout ends it.
		{"TLS to a plain port", strings.Replace(plain, "redis://", "rediss://", 1) + "?dial_timeout=1s",
			fmt.Sprintf("cannot reach Redis at %s over TLS: no answer in time; check host and port, that the server is running and that the port speaks TLS (redis:// for one without)", hostOf(t, plain))},
		{"plain to a TLS port", strings.Replace(tlsURL.String(), "rediss://", "redis://", 1),
			fmt.Sprintf("cannot reach Redis at 127.0.0.1:%d: the server closed the connection; check host and port and that the server is running (a TLS port needs rediss://)", tlsPort)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			db, err := drivertest.OpenURL(t, tc.url, "", driver.Options{Sessions: 1})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			if !badinput.Is(err) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q (bad input %v), want one line starting %q", err, badinput.Is(err), tc.want)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v to fail", d)
			}
		})
	}
}
