// Package warccheck reads back the WARC files a test wrote, with three readers
// that share no code: ours (package warc), gowarc (github.com/nlnwa/gowarc, in
// strict mode) and warcio.js (npm's warcio, run with node). They must find the
// same records, in the same order, with the same types and target URIs; each
// response record's payload digest, computed by each reader from the payload it
// found, must equal the one the record claims. The CDXJ index beside each file
// must have one line per response and revisit record, pointing at the gzip
// member where gowarc and warcio.js found that record.
//
// warcio.js is looked for in .cache/node/node_modules under the module's root,
// where scripts/test installs it. Without it (or without node) that reader is
// left out, with one message on standard error, unless the environment variable
// CI is set: then its absence fails the test.
//
// It is for tests only.
package warccheck

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/warc"
	"github.com/nlnwa/gowarc/v3"
)

// record is what a reader found of one record.
type record struct {
	Type string
	URI  string
	// Digest is the WARC-Payload-Digest the record claims, "" if none.
	Digest string
	// Computed is the payload digest the reader computed, for response records;
	// "" otherwise.
	Computed string
	// Offset and Length locate the record's gzip member in the file.
	Offset, Length int64
}

var registered = struct {
	sync.Mutex
	m map[registration]bool
}{m: map[registration]bool{}}

type registration struct {
	t   testing.TB
	dir string
}

// AtCleanup has Job(t, dir) run when t and its subtests end, once however often
// it is called for the same t and dir. Nothing is checked if dir then holds no
// WARC file.
func AtCleanup(t testing.TB, dir string) {
	t.Helper()
	key := registration{t, filepath.Clean(dir)}
	registered.Lock()
	defer registered.Unlock()
	if registered.m[key] {
		return
	}
	registered.m[key] = true
	t.Cleanup(func() {
		registered.Lock()
		delete(registered.m, key)
		registered.Unlock()
		Job(t, dir)
	})
}

// Job checks every *.warc.gz file under dir (a job directory, say) as the package
// comment says, and fails t with a message for each difference. Files still
// open (.warc.gz.open) are not read.
func Job(t testing.TB, dir string) {
	t.Helper()
	files := warcFiles(t, dir)
	if len(files) == 0 {
		return
	}
	ours := map[string][]record{}
	for _, f := range files {
		recs, err := readOurs(f)
		if err != nil {
			t.Errorf("warccheck: %s: our reader: %v", f, err)
			continue
		}
		ours[f] = recs
		for i, r := range recs {
			if r.Type == "response" && r.Digest != "" && r.Computed != r.Digest {
				t.Errorf("warccheck: %s record %d (%s): our reader computes the payload digest %s, the record claims %s",
					f, i+1, r.URI, r.Computed, r.Digest)
			}
		}
		gw, err := readGowarc(f)
		if err != nil {
			t.Errorf("warccheck: %s: gowarc: %v", f, err)
		} else {
			compare(t, f, "gowarc", recs, gw)
		}
		checkIndex(t, f, recs)
	}
	byWarcio, err := readWarcio(files)
	switch {
	case errors.Is(err, errNoWarcio):
		if os.Getenv("CI") != "" {
			t.Errorf("warccheck: %v; CI must read WARC files with it (scripts/test installs it)", err)
		} else {
			noWarcioOnce.Do(func() {
				fmt.Fprintf(os.Stderr, "warccheck: %v: WARC files are not read back with warcio.js (scripts/test installs it)\n", err)
			})
		}
	case err != nil:
		t.Errorf("warccheck: warcio.js: %v", err)
	default:
		for _, f := range files {
			if recs, ok := ours[f]; ok {
				compare(t, f, "warcio.js", recs, byWarcio[f])
			}
		}
	}
}

var noWarcioOnce sync.Once

// warcFiles returns the *.warc.gz files under dir, sorted.
func warcFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll // nothing written
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(path, ".warc.gz") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Errorf("warccheck: %v", err)
	}
	slices.Sort(files)
	return files
}

// compare reports where other's records differ from ours.
func compare(t testing.TB, file, reader string, ours, other []record) {
	t.Helper()
	for i := range max(len(ours), len(other)) {
		if i >= len(ours) {
			t.Errorf("warccheck: %s: %s reads record %d (%s %s), which our reader does not", file, reader, i+1, other[i].Type, other[i].URI)
			continue
		}
		if i >= len(other) {
			t.Errorf("warccheck: %s: %s reads %d records, ours %d; the first missing is %s %s", file, reader, len(other), len(ours), ours[i].Type, ours[i].URI)
			break
		}
		o, g := ours[i], other[i]
		if o.Type != g.Type || o.URI != g.URI || o.Digest != g.Digest {
			t.Errorf("warccheck: %s record %d: %s reads %s %s (payload digest %q), ours %s %s (%q)",
				file, i+1, reader, g.Type, g.URI, g.Digest, o.Type, o.URI, o.Digest)
			continue
		}
		if o.Type == "response" && g.Computed != o.Computed {
			t.Errorf("warccheck: %s record %d (%s): %s computes the payload digest %s, ours %s",
				file, i+1, o.URI, reader, g.Computed, o.Computed)
		}
		if o.Type == "response" && o.Digest != "" && g.Computed != o.Digest {
			t.Errorf("warccheck: %s record %d (%s): %s computes the payload digest %s, the record claims %s",
				file, i+1, o.URI, reader, g.Computed, o.Digest)
		}
		if g.Offset != o.Offset || g.Length != o.Length {
			t.Errorf("warccheck: %s record %d (%s): %s finds it at offset %d, length %d; the gzip members are at %d, length %d",
				file, i+1, o.URI, reader, g.Offset, g.Length, o.Offset, o.Length)
		}
	}
}

// readOurs reads path with package warc, and finds its gzip members with
// compress/gzip.
func readOurs(path string) ([]record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	members, err := gzipMembers(data)
	if err != nil {
		return nil, err
	}
	r, err := warc.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var recs []record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return recs, err
		}
		x := record{Type: rec.Type, URI: rec.Get("WARC-Target-URI"), Digest: rec.Get("WARC-Payload-Digest")}
		if rec.Type == "response" {
			x.Computed = payloadDigest(rec.Block)
		}
		recs = append(recs, x)
	}
	if len(members) != len(recs) {
		return recs, fmt.Errorf("%d records in %d gzip members, want one record per member", len(recs), len(members))
	}
	for i := range recs {
		recs[i].Offset, recs[i].Length = members[i][0], members[i][1]
	}
	return recs, nil
}

// gzipMembers returns the offset and length of each gzip member of data.
func gzipMembers(data []byte) ([][2]int64, error) {
	br := bytes.NewReader(data) // an io.ByteReader: gzip reads no further than a member
	var members [][2]int64
	for br.Len() > 0 {
		start := int64(len(data) - br.Len())
		zr, err := gzip.NewReader(br)
		if err != nil {
			return members, fmt.Errorf("gzip member at %d: %w", start, err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return members, fmt.Errorf("gzip member at %d: %w", start, err)
		}
		members = append(members, [2]int64{start, int64(len(data)-br.Len()) - start})
	}
	return members, nil
}

// payloadDigest returns "sha1:BASE32" of what follows the header section of the
// HTTP message msg, "" if it has no end of header section.
func payloadDigest(msg []byte) string {
	rest := msg
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return ""
		}
		rest = rest[i+1:]
		if bytes.HasPrefix(rest, []byte("\r\n")) {
			rest = rest[2:]
			break
		}
		if bytes.HasPrefix(rest, []byte("\n")) {
			rest = rest[1:]
			break
		}
	}
	sum := sha1.Sum(rest)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// gowarcMu serialises gowarc: each of its readers sets a global of
// github.com/google/uuid (EnableRandPool) when it is made, a data race
// when parallel tests read at once.
var gowarcMu sync.Mutex

// readGowarc reads path with gowarc, strictly: a validation finding or a digest
// that does not match is an error.
func readGowarc(path string) ([]record, error) {
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, fmt.Errorf("record %d: %w", len(recs)+1, err)
		}
		wr := rec.WarcRecord
		if len(rec.Validation) > 0 {
			rec.Close()
			return recs, fmt.Errorf("record %d: %v", len(recs)+1, rec.Validation)
		}
		if v, err := wr.ValidateDigest(); err != nil || len(v) > 0 {
			rec.Close()
			return recs, fmt.Errorf("record %d (%s): digests: %v %v", len(recs)+1, wr.Type(), v, err)
		}
		x := record{
			Type:   wr.Type().String(),
			URI:    wr.WarcHeader().Get(gowarc.WarcTargetURI),
			Digest: wr.WarcHeader().Get(gowarc.WarcPayloadDigest),
			Offset: rec.Offset,
			Length: rec.Size,
		}
		if x.Type == "response" {
			if b, ok := wr.Block().(interface{ PayloadDigest() string }); ok {
				x.Computed = b.PayloadDigest()
			}
		}
		rec.Close()
		recs = append(recs, x)
	}
}

// checkIndex checks the CDXJ index of the WARC file path against its records.
func checkIndex(t testing.TB, path string, recs []record) {
	t.Helper()
	idx := warc.IndexPath(path)
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Errorf("warccheck: %s has no index: %v", path, err)
		return
	}
	want := map[[2]int64]record{} // response and revisit records by member
	for _, r := range recs {
		if r.Type == "response" || r.Type == "revisit" {
			want[[2]int64{r.Offset, r.Length}] = r
		}
	}
	var lines []string
	if len(data) > 0 {
		lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	}
	if len(lines) != len(want) {
		t.Errorf("warccheck: %s: %d lines, want %d (the response and revisit records)", idx, len(lines), len(want))
	}
	if !slices.IsSorted(lines) {
		t.Errorf("warccheck: %s: lines not sorted", idx)
	}
	for n, l := range lines {
		key, rest, _ := strings.Cut(l, " ")
		_, js, _ := strings.Cut(rest, " ")
		var f map[string]string
		if err := json.Unmarshal([]byte(js), &f); err != nil {
			t.Errorf("warccheck: %s line %d: %v", idx, n+1, err)
			continue
		}
		off, _ := strconv.ParseInt(f["offset"], 10, 64)
		length, _ := strconv.ParseInt(f["length"], 10, 64)
		r, ok := want[[2]int64{off, length}]
		if !ok {
			t.Errorf("warccheck: %s line %d: offset %s length %s is no response or revisit record's gzip member", idx, n+1, f["offset"], f["length"])
			continue
		}
		delete(want, [2]int64{off, length})
		wantDigest := "-"
		if r.Digest != "" {
			_, wantDigest, _ = strings.Cut(r.Digest, ":")
		}
		if f["url"] != r.URI || key != warc.SURT(r.URI) || f["digest"] != wantDigest || f["filename"] != filepath.Base(path) ||
			(r.Type == "revisit") != (f["mime"] == "warc/revisit") {
			t.Errorf("warccheck: %s line %d: %s\ndoes not describe the %s record %s (payload digest %s) at offset %d",
				idx, n+1, l, r.Type, r.URI, r.Digest, off)
		}
	}
}

var errNoWarcio = errors.New("warcio.js not found")

// readWarcio reads the files with warcio.js, in one node process.
func readWarcio(files []string) (map[string][]record, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: no node: %v", errNoWarcio, err)
	}
	modules, err := nodeModules()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", warcioScript)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node: %v\n%s", err, stderr.Bytes())
	}
	got := map[string][]record{}
	ended := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r struct {
			File, Error       string
			End               bool
			Type, URI, Digest string
			Computed          string
			Offset, Length    int64
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("output %q: %v", line, err)
		}
		switch {
		case r.Error != "":
			return nil, fmt.Errorf("%s: %s", r.File, r.Error)
		case r.End:
			ended[r.File] = true
		default:
			got[r.File] = append(got[r.File], record{r.Type, r.URI, r.Digest, r.Computed, r.Offset, r.Length})
		}
	}
	for _, f := range files {
		if !ended[f] {
			return nil, fmt.Errorf("%s: not read to its end\n%s", f, stderr.Bytes())
		}
	}
	return got, nil
}

// nodeModules returns the node_modules directory scripts/test installs warcio
// into, found from the module's root: the nearest directory up from the working
// directory (a test's is its package's) that holds go.mod.
func nodeModules() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod above the working directory", errNoWarcio)
		}
		dir = parent
	}
	modules := filepath.Join(dir, ".cache", "node", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "warcio", "package.json")); err != nil {
		return "", fmt.Errorf("%w in %s", errNoWarcio, modules)
	}
	return modules, nil
}

// warcioScript reads the files named on its standard input, one a line, with
// warcio's WARCParser, and writes a JSON line per record: type, target URI,
// claimed payload digest, for a response the SHA-1 of the payload as warcio
// hands it over (after the HTTP header, not decoded), in base32, and where the
// record's gzip member starts and how long it is. After a file it writes {"file":..., "end":true}; on an error,
// {"file":..., "error":...}.
const warcioScript = `
"use strict";
const fs = require("fs");
const crypto = require("crypto");
const { WARCParser } = require("warcio");

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(bytes) {
  let out = "", bits = 0, value = 0;
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

function emit(obj) { process.stdout.write(JSON.stringify(obj) + "\n"); }

async function readFile(file) {
  const parser = new WARCParser(fs.createReadStream(file));
  for await (const record of parser) {
    const rec = {
      file,
      type: record.warcType || "",
      uri: record.warcTargetURI || "",
      digest: record.warcPayloadDigest || "",
      computed: "",
      offset: parser.offset,
    };
    if (rec.type === "response") {
      const payload = await record.readFully(false);
      rec.computed = "sha1:" + base32(crypto.createHash("sha1").update(payload).digest());
    } else {
      await record.skipFully();
    }
    rec.length = parser.recordLength;
    emit(rec);
  }
  emit({ file, end: true });
}

(async () => {
  const files = fs.readFileSync(0, "utf8").split("\n").filter((f) => f !== "");
  for (const file of files) {
    try {
      await readFile(file);
    } catch (e) {
      emit({ file, error: String((e && e.stack) || e) });
    }
  }
})();
`
