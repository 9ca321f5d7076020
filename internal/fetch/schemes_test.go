package fetch

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

// The two stacks of Client.Do: http:// URLs go through h1, https:// ones
// through net/http's Transport, in HTTP/2 when the server offers it (the
// httptest servers of newServerOn do) and HTTP/1.1 when it speaks only
// that (the raw servers of rawServerOn and newAliveServerOn). Tests that
// must hold on both run once per scheme.
var schemes = []string{"http", "https"}

// eachScheme runs f as a subtest per scheme.
func eachScheme(t *testing.T, f func(t *testing.T, scheme string)) {
	t.Helper()
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) { f(t, scheme) })
	}
}

// testCert is a self-signed certificate for the loopback addresses and the
// names the tests connect to, and a pool that trusts it.
var testCert = sync.OnceValues(func() (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(29),
		Subject:               pkix.Name{CommonName: "gentlecrawl test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost", "example.com", "public.example"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
})

// serverTLS is a server configuration with testCert that offers the
// application protocols protos (ALPN).
func serverTLS(protos ...string) *tls.Config {
	cert, _ := testCert()
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos}
}

// newClientOn is newClient, trusting testCert for https://.
func newClientOn(t *testing.T, cfg Config) *Client {
	t.Helper()
	c := newClient(t, cfg)
	_, pool := testCert()
	c.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return c
}

// tcpConn is the TCP connection under conn, which may be TLS.
func tcpConn(conn net.Conn) *net.TCPConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	return conn.(*net.TCPConn)
}
