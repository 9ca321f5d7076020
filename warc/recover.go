package warc

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Recover closes out the files a crashed [Writer] left in dir. Each *.warc.gz.open
// file is cut back to the end of its last complete gzip member that holds exactly
// one well-formed record, fsynced, and renamed to drop ".open"; a file without one
// complete record is removed. No Writer may be writing into dir meanwhile.
//
// Recover returns one line per file saying what it did, for logging. An error on one
// file does not stop the others; the errors are joined.
func Recover(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: recover: %w", err)
	}
	var done []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".warc.gz"+OpenSuffix) {
			continue
		}
		msg, err := recoverFile(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, msg)
	}
	if len(done) > 0 {
		if err := syncDir(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

func recoverFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	good, records := completeMembers(f)

	if records == 0 {
		f.Close()
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("warc: recover: %w", err)
		}
		return fmt.Sprintf("removed %s: no complete record in %d bytes", path, st.Size()), nil
	}

	final := strings.TrimSuffix(path, OpenSuffix)
	if _, err := os.Lstat(final); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("warc: recover %s: %s already exists", path, final)
	}
	msg := fmt.Sprintf("renamed %s to %s: %d records", path, filepath.Base(final), records)
	if good < st.Size() {
		if err := f.Truncate(good); err != nil {
			return "", fmt.Errorf("warc: recover: %w", err)
		}
		msg += fmt.Sprintf(", cut from %d to %d bytes", st.Size(), good)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("warc: recover: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	if err := os.Rename(path, final); err != nil {
		return "", fmt.Errorf("warc: recover: %w", err)
	}
	return msg, nil
}

// completeMembers returns the length of the longest prefix of r made of whole gzip
// members that each hold one well-formed record, and how many there are.
func completeMembers(r io.Reader) (good int64, records int) {
	// gzip (through flate) reads exactly to the end of a member when its source is
	// an io.ByteReader, so cr.n is the member boundary after each one.
	cr := &countingReader{br: bufio.NewReaderSize(r, 1<<16)}
	var zr gzip.Reader
	rbr := bufio.NewReader(nil)
	for {
		if err := zr.Reset(cr); err != nil {
			return good, records // clean end, or a damaged member header
		}
		zr.Multistream(false)
		rbr.Reset(&zr)
		if _, err := readRecord(rbr, math.MaxInt64, false); err != nil {
			return good, records
		}
		// One record per member, and the member's checksum must hold: gzip checks it
		// when it reports the end of the member.
		if _, err := rbr.ReadByte(); err != io.EOF {
			return good, records
		}
		good = cr.n
		records++
	}
}

type countingReader struct {
	br *bufio.Reader
	n  int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
