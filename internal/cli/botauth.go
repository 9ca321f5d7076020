package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
	"github.com/gentlecrawl/gentlecrawl/site"
	"github.com/spf13/cobra"
)

// The files keygen writes in --out.
const (
	keyFile       = "signing-key.pem"
	directoryFile = "http-message-signatures-directory"
)

func newKeygenCmd(stdout, stderr io.Writer) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out DIR",
		Short: "Make a key to sign requests with, and the key directory to publish",
		Long: `Make an Ed25519 key for signed requests (HTTP Message Signatures, RFC 9421,
in the Web Bot Auth profile), so that sites can verify your crawler by its key.

It writes two files in DIR, and overwrites neither:
  ` + keyFile + `                      the private key (PEM, PKCS#8), mode 0600: keep it secret
  ` + directoryFile + `   the public key as a JWK Set: publish it

Publish the directory at https://YOUR-HOST/.well-known/http-message-signatures-directory
with Content-Type: application/http-message-signatures-directory+json, then crawl with
--sign-key DIR/` + keyFile + ` --signature-agent https://YOUR-HOST. Keys are named by
their JWK thumbprint (RFC 7638), which keygen prints. To rotate, publish the old and
the new key together until the old one is no longer used.`,
		Example: `  gentlecrawl keygen --out keys/
  gentlecrawl crawl --job jobs/example --sign-key keys/signing-key.pem \
      --signature-agent https://crawler.example.org https://example.org/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return exitError{2, errors.New("keygen: --out DIR is required")}
			}
			return runKeygen(out, stdout)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write the key and the key directory in (made if missing)")
	return cmd
}

func runKeygen(dir string, stdout io.Writer) error {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	pemKey, err := httpsig.MarshalPrivateKeyPEM(priv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keyPath, dirPath := filepath.Join(dir, keyFile), filepath.Join(dir, directoryFile)
	for _, p := range []string{keyPath, dirPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("keygen: %s exists; keygen overwrites no key (choose another --out)", p)
		}
	}
	if err := writeNew(keyPath, pemKey, 0o600); err != nil {
		return err
	}
	if err := writeNew(dirPath, httpsig.MarshalDirectory(pub), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, `Wrote %s (the private key: keep it secret)
  and %s (the public key directory: publish it).
Key id (JWK thumbprint): %s

Publish the directory at https://YOUR-HOST%s
with Content-Type: %s, then crawl with
  gentlecrawl crawl --sign-key %s --signature-agent https://YOUR-HOST ...
`, keyPath, dirPath, httpsig.Thumbprint(pub), httpsig.WellKnownPath, httpsig.MediaType, keyPath)
	return nil
}

// writeNew writes a file that must not exist yet, with perm from its
// creation on (a private key is never readable by others, even briefly).
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readSignKey reads --sign-key: an Ed25519 private key in PEM (PKCS#8) or
// as a JWK. A file others may read is used, with a warning.
func readSignKey(path string, stderr io.Writer) (ed25519.PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--sign-key: %w", err)
	}
	if fi.Size() > 64<<10 {
		return nil, fmt.Errorf("--sign-key %s: %d bytes is not a key", path, fi.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--sign-key: %w", err)
	}
	key, err := httpsig.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("--sign-key %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "gentlecrawl: warning: --sign-key %s can be read by others (mode %v); chmod 600 it\n", path, fi.Mode().Perm())
	}
	return key, nil
}

type verifyFlags struct {
	ip           string
	scheme       string
	at           string
	allowPrivate bool
	json         bool
	timeout      time.Duration
}

func newVerifyCmd(stdout, stderr io.Writer) *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify [flags] [FILE|-]",
		Short: "Tell who sent a request, from its headers: a signature, or a known crawler's address",
		Long: `Check a request the way package site's BotAuth does, for a site owner: read it
as text (the request line and the header fields, as a log or a WARC request
record has them) from FILE or standard input, and print the verdict and why.

The verdicts: signature (a Web Bot Auth signature verified with a key its
Signature-Agent publishes), dns (the User-Agent names a known crawler, and
--ip is that crawler's address by reverse DNS confirmed forward), spoofed (a
signature that does not verify, or a known crawler's name from an address that
is not the crawler's), unverified (anything else).

A signature holds for a short while (a minute, for gentlecrawl's): give --at,
the time the request came, to check one from a log. The signer's key directory
is fetched now, from the https:// origin its Signature-Agent names, never from
a private address unless --allow-private-networks.

Exit status: 0 when the request is verified (signature or dns), 1 when it is
unverified or spoofed, 2 when it could not be read.`,
		Example: `  gentlecrawl verify request.txt
  gentlecrawl verify --ip 66.249.66.1 --at 2026-12-06T10:00:00Z - < request.txt
  printf 'GET / HTTP/1.1\nHost: example.org\nUser-Agent: Googlebot/2.1\n' | gentlecrawl verify --ip 203.0.113.7`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := io.Reader(cmd.InOrStdin())
			name := "standard input"
			if len(args) == 1 && args[0] != "-" {
				file, err := os.Open(args[0])
				if err != nil {
					return exitError{2, err}
				}
				defer file.Close()
				in, name = file, args[0]
			}
			return runVerify(cmd.Context(), f, in, name, stdout)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.ip, "ip", "", "the client's address, to check a crawler the User-Agent names")
	fs.StringVar(&f.at, "at", "", "when the request came: RFC 3339 or Unix seconds (default: now)")
	fs.StringVar(&f.scheme, "scheme", "https", "the scheme the request came with, http or https, unless its request line has an absolute URL")
	fs.BoolVar(&f.allowPrivate, "allow-private-networks", false, "fetch key directories from loopback and private addresses (refused by default)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "limit on fetching the key directory")
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	return cmd
}

// maxRequestText bounds the request read by verify.
const maxRequestText = 1 << 20

// readRequestText reads a request head given as text: a request line and
// header fields, with CRLF or LF line ends, the empty line that ends the
// head optional, a body ignored.
func readRequestText(in io.Reader) (*http.Request, error) {
	data, err := io.ReadAll(io.LimitReader(in, maxRequestText+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequestText {
		return nil, fmt.Errorf("more than %d bytes: not a request head", maxRequestText)
	}
	data = bytes.TrimLeft(data, "\r\n\t ")
	if len(data) == 0 {
		return nil, errors.New("empty: want a request line and header fields")
	}
	if !bytes.Contains(data, []byte("\n\n")) && !bytes.Contains(data, []byte("\n\r\n")) {
		data = append(bytes.TrimRight(data, "\r\n\t "), "\r\n\r\n"...)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		return nil, fmt.Errorf("not a request head (want \"GET /path HTTP/1.1\", then Name: value lines): %w", err)
	}
	if req.Host == "" {
		return nil, errors.New("no Host field (or absolute URL in the request line): the signature covers it")
	}
	return req, nil
}

func parseAt(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at %q: want RFC 3339 (2026-12-06T10:00:00Z) or Unix seconds", s)
	}
	return t, nil
}

func runVerify(ctx context.Context, f verifyFlags, in io.Reader, name string, stdout io.Writer) error {
	req, err := readRequestText(in)
	if err != nil {
		return exitError{2, fmt.Errorf("verify: %s: %w", name, err)}
	}
	m := site.Message{Method: req.Method, Scheme: f.scheme, Authority: req.Host, Target: req.RequestURI, Header: req.Header}
	if req.URL.IsAbs() {
		m.Scheme, m.Target = req.URL.Scheme, req.URL.RequestURI()
	}
	if m.Scheme != "http" && m.Scheme != "https" {
		return exitError{2, fmt.Errorf("--scheme %q: http or https", m.Scheme)}
	}
	if f.ip != "" {
		if m.ClientIP, err = netip.ParseAddr(f.ip); err != nil {
			return exitError{2, fmt.Errorf("--ip %q: %w", f.ip, err)}
		}
	}
	b := &site.BotAuth{
		AllowPrivateNetworks: f.allowPrivate,
		DirectoryTimeout:     f.timeout,
		UserAgent:            fmt.Sprintf("gentlecrawl-verify/%s (+%s)", gentlecrawl.Version, gentlecrawl.InfoURL),
	}
	if f.at != "" {
		at, err := parseAt(f.at)
		if err != nil {
			return exitError{2, err}
		}
		b.Now = func() time.Time { return at }
	}
	id := b.Verify(ctx, m)
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		out := struct {
			Verdict   string `json:"verdict"`
			Why       string `json:"why"`
			Agent     string `json:"agent,omitempty"`
			KeyID     string `json:"keyid,omitempty"`
			Signature string `json:"signature"`
			Expires   string `json:"expires,omitempty"`
			Crawler   string `json:"crawler,omitempty"`
			Claim     string `json:"claim,omitempty"`
		}{Verdict: id.Verdict.String(), Why: id.Why, Agent: id.Agent, KeyID: id.KeyID, Signature: id.Signature.String(), Crawler: id.Claim.Crawler, Claim: claimText(id)}
		if !id.Expires.IsZero() {
			out.Expires = id.Expires.UTC().Format(time.RFC3339)
		}
		if err := enc.Encode(out); err != nil {
			return exitError{2, err}
		}
	} else {
		w := &errWriter{w: stdout}
		fmt.Fprintf(w, "verdict:    %s\n", id.Verdict)
		fmt.Fprintf(w, "why:        %s\n", id.Why)
		sig := id.Signature.String()
		if id.SignatureErr != nil {
			sig += ": " + id.SignatureErr.Error()
		} else if id.Signature == site.SignatureValid {
			sig += ", until " + id.Expires.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "signature:  %s\n", sig)
		if id.Agent != "" {
			fmt.Fprintf(w, "agent:      %s\n", id.Agent)
			fmt.Fprintf(w, "key:        %s\n", id.KeyID)
		}
		if c := claimText(id); c != "" {
			fmt.Fprintf(w, "user-agent: claims %s: %s\n", id.Claim.Crawler, c)
		}
		if w.err != nil {
			return exitError{2, w.err}
		}
	}
	if id.Verdict != site.VerifiedBySignature && id.Verdict != site.VerifiedByDNS {
		return exitError{1, fmt.Errorf("verify: %s", id.Verdict)}
	}
	return nil
}

func claimText(id site.Identity) string {
	switch {
	case id.Claim.Crawler == "":
		return ""
	case id.Claim.Verified:
		s := "confirmed by " + id.Claim.By.String()
		if id.Claim.Host != "" {
			s += " (" + id.Claim.Host + ")"
		}
		return s
	case id.Claim.Spoofed:
		return "refuted: not the crawler's address"
	case id.ClaimErr != nil:
		return "not checked: " + id.ClaimErr.Error()
	}
	return "not checked"
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
