// Package botauthtest runs npm's web-bot-auth, the reference
// implementation of the Web Bot Auth drafts (Cloudflare's, in TypeScript),
// with node: it verifies requests gentlecrawl signed, and signs requests
// for gentlecrawl's verifier, so that both sides are tested against code
// gentlecrawl did not write.
//
// The package is looked for in .cache/node/node_modules under the module's
// root, where scripts/test installs it, at Version. Without it (or without
// node) the tests that need it are skipped with a message, unless the
// environment variable CI is set: then they fail.
//
// It is for tests only.
package botauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Version is the web-bot-auth scripts/test installs.
const Version = "0.1.3"

// Node returns the node binary and the node_modules directory that holds
// web-bot-auth at Version. Without them it skips t, or fails it under CI.
func Node(t testing.TB) (node, modules string) {
	t.Helper()
	node, modules, err := find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("botauthtest: %v; CI must run it (scripts/test installs it)", err)
		}
		t.Skipf("botauthtest: %v: npm's web-bot-auth %s is not installed (scripts/test installs it into .cache/node)", err, Version)
	}
	return node, modules
}

func find() (node, modules string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", fmt.Errorf("no node: %w", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
	modules = filepath.Join(dir, ".cache", "node", "node_modules")
	b, err := os.ReadFile(filepath.Join(modules, "web-bot-auth", "package.json"))
	if err != nil {
		return "", "", fmt.Errorf("web-bot-auth not found in %s", modules)
	}
	var pkg struct{ Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Version != Version {
		return "", "", fmt.Errorf("web-bot-auth %s in %s, want %s", pkg.Version, modules, Version)
	}
	return node, modules, nil
}

// Request is a request as the scripts take it: its absolute URL (the
// scheme and Host it was sent with, and its target) and its header fields.
type Request struct {
	URL    string            `json:"url"`
	Header map[string]string `json:"headers"`
}

// FromHTTP is r, as a server received it, for Verify.
func FromHTTP(r *http.Request, scheme string) Request {
	h := map[string]string{}
	for k, vs := range r.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return Request{URL: scheme + "://" + r.Host + r.RequestURI, Header: h}
}

// Verdict is web-bot-auth's answer for one request.
type Verdict struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	KeyID string `json:"keyid"`
	// ContentType is the media type the key directory came with.
	ContentType string `json:"contentType"`
}

// Verify has web-bot-auth's verify check each request, as the package's
// reference verifier (examples/verification-workers of its 0.1.3 release)
// does: the key directory is fetched from the origin the Signature-Agent
// field names (a String, read as JSON), at
// /.well-known/http-message-signatures-directory, and the key is the one
// whose JWK thumbprint is the signature's keyid. caFile, when not empty, is
// a PEM file of certificates node trusts besides its own
// (NODE_EXTRA_CA_CERTS), for a directory served on loopback.
func Verify(t testing.TB, caFile string, reqs []Request) []Verdict {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		b, _ := json.Marshal(r)
		in.Write(append(b, '\n'))
	}
	var env []string
	if caFile != "" {
		env = append(env, "NODE_EXTRA_CA_CERTS="+caFile)
	}
	out := run(t, verifyScript, &in, env)
	var vs []Verdict
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var v Verdict
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("botauthtest: verify printed %q: %v", line, err)
		}
		vs = append(vs, v)
	}
	if len(vs) != len(reqs) {
		t.Fatalf("botauthtest: %d verdicts for %d requests:\n%s", len(vs), len(reqs), out)
	}
	return vs
}

// Sign has web-bot-auth's signatureHeaders sign each request with the
// private JWK (an Ed25519 key with d), valid from created for validity:
// the request's Signature-Agent field, when it has one, is covered. It
// returns the fields to add to each request: Signature and
// Signature-Input.
func Sign(t testing.TB, jwk []byte, created time.Time, validity time.Duration, reqs []Request) []http.Header {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		b, _ := json.Marshal(struct {
			Request
			JWK     json.RawMessage `json:"jwk"`
			Created int64           `json:"created"`
			Expires int64           `json:"expires"`
		}{r, jwk, created.UnixMilli(), created.Add(validity).UnixMilli()})
		in.Write(append(b, '\n'))
	}
	out := run(t, signScript, &in, nil)
	var hs []http.Header
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]string
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("botauthtest: sign printed %q: %v", line, err)
		}
		if m["error"] != "" {
			t.Fatalf("botauthtest: web-bot-auth could not sign: %s", m["error"])
		}
		h := http.Header{}
		for k, v := range m {
			h.Set(k, v)
		}
		hs = append(hs, h)
	}
	if len(hs) != len(reqs) {
		t.Fatalf("botauthtest: %d signatures for %d requests", len(hs), len(reqs))
	}
	return hs
}

func run(t testing.TB, script string, stdin *bytes.Buffer, env []string) []byte {
	t.Helper()
	node, modules := Node(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+modules), env...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("botauthtest: node: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// verifyScript reads a request a line ({"url", "headers"}) and writes a
// verdict a line ({"ok", "error", "keyid", "contentType"}).
const verifyScript = `
"use strict";
const { verify, jwkToKeyID, helpers } = require("web-bot-auth");
const { verifierFromJWK } = require("web-bot-auth/crypto");
const readline = require("readline");

const directories = new Map();
async function directory(field) {
  // As the package's reference verifier does: the field is a String.
  const origin = new URL(JSON.parse(field)).origin;
  if (!directories.has(origin)) {
    const res = await fetch(origin + "/.well-known/http-message-signatures-directory", { redirect: "manual" });
    if (res.status !== 200) throw new Error("key directory: status " + res.status);
    const contentType = res.headers.get("content-type");
    const keys = new Map();
    for (const jwk of (await res.json()).keys) {
      keys.set(await jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE), jwk);
    }
    directories.set(origin, { keys, contentType });
  }
  return directories.get(origin);
}

(async () => {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { url, headers } = JSON.parse(line);
    let out;
    try {
      if (!headers["signature-agent"]) throw new Error("no Signature-Agent");
      const dir = await directory(headers["signature-agent"]);
      let keyid;
      await verify(new Request(url, { headers }), async (data, signature, params) => {
        keyid = params.keyid;
        const jwk = dir.keys.get(params.keyid);
        if (!jwk) throw new Error("keyid " + params.keyid + " is not in the directory");
        return (await verifierFromJWK(jwk))(data, signature, params);
      });
      out = { ok: true, keyid, contentType: dir.contentType };
    } catch (e) {
      out = { ok: false, error: String((e && e.message) || e) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
})().catch((e) => { console.error(e); process.exit(1); });
`

// signScript reads a request a line ({"url", "headers", "jwk", "created",
// "expires"}) and writes its signature fields a line.
const signScript = `
"use strict";
const { signatureHeaders } = require("web-bot-auth");
const { signerFromJWK } = require("web-bot-auth/crypto");
const readline = require("readline");

(async () => {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { url, headers, jwk, created, expires } = JSON.parse(line);
    let out;
    try {
      out = await signatureHeaders(new Request(url, { headers }), await signerFromJWK(jwk), {
        created: new Date(created),
        expires: new Date(expires),
      });
    } catch (e) {
      out = { error: String((e && e.message) || e) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
})().catch((e) => { console.error(e); process.exit(1); });
`
