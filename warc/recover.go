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
// complete record is removed. Then every *.warc.gz file in dir without a CDXJ index
// (see [IndexPath]) gets one, made by reading the file: the files just closed out,
// one whose index a crash kept from being written, or one written before indexes
// were. Only records in whole gzip members are indexed; a damaged or incomplete
// tail is left out of the index, and in the file. No Writer may be writing into dir
// meanwhile.
//
// Recover returns one line per file saying what it did, for logging (a file closed
// out and indexed gets one line). An error on one
// file does not stop the others; the errors are joined.
func Recover(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: recover: %w", err)
	}
	var done []string
	var errs []error
	changed := false
	closedOut := map[string]int{} // final path of a file closed out → its line in done
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") && strings.Contains(name, indexTempMarker) {
			// Part of an index a crash interrupted; the index is made again below.
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				errs = append(errs, fmt.Errorf("warc: recover: %w", err))
			}
			continue
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".warc.gz"+OpenSuffix) {
			continue
		}
		path := filepath.Join(dir, name)
		msg, err := recoverFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		closedOut[strings.TrimSuffix(path, OpenSuffix)] = len(done)
		done = append(done, msg)
		changed = true
	}

	// The directory again: the files just renamed are in it now.
	if entries, err = os.ReadDir(dir); err != nil {
		errs = append(errs, fmt.Errorf("warc: recover: %w", err))
		entries = nil
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".warc.gz") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(IndexPath(path)); !errors.Is(err, fs.ErrNotExist) {
			if err != nil {
				errs = append(errs, fmt.Errorf("warc: recover: %w", err))
			}
			continue
		}
		lines, good, size, err := indexFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		changed = true
		if i, ok := closedOut[path]; ok {
			done[i] += fmt.Sprintf("; indexed: %d lines in %s", lines, filepath.Base(IndexPath(path)))
			continue
		}
		msg := fmt.Sprintf("indexed %s, which had no index: %d lines in %s", e.Name(), lines, filepath.Base(IndexPath(path)))
		if good < size {
			msg += fmt.Sprintf(", the last %d of %d bytes not indexed (not whole records)", size-good, size)
		}
		done = append(done, msg)
	}
	if changed {
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
	return scanMembers(r, 0, nil)
}

// scanMembers reads r as a sequence of gzip members that each hold one well-formed
// record, up to the first that is not, and returns the length of that prefix and
// the number of records in it. For each such record it calls fn, if not nil, with
// the record (its Block holding at most the first keep bytes of the block) and the
// offset and length of its member.
func scanMembers(r io.Reader, keep int64, fn func(rec *Record, offset, length int64)) (good int64, records int) {
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
		rec, err := readRecord(rbr, math.MaxInt64, keep)
		if err != nil {
			return good, records
		}
		// One record per member, and the member's checksum must hold: gzip checks it
		// when it reports the end of the member.
		if _, err := rbr.ReadByte(); err != io.EOF {
			return good, records
		}
		if fn != nil {
			fn(rec, good, cr.n-good)
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
