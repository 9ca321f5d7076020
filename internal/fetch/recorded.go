package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DecodeBody decodes a body recorded as it was received (Result.RawBody,
// the payload of a WARC response record) with the decoders and caps Do
// uses: the content codings header names are undone in reverse order, at
// most DefaultMaxEncodings of them; decoding stops at maxSize bytes
// (ErrBodyTooLarge) or when the output passes DefaultMaxDecodeRatio times
// the whole recorded input, once past 1 MiB (ErrDecompressionBomb).
// maxSize <= 0 means DefaultMaxBodySize.
//
// It returns what decoded, with a non-nil error when that is not the
// whole body. The result is appended to dst[:0] when raw is encoded; an
// unencoded body is returned as raw itself (cut to maxSize), not copied.
func DecodeBody(dst []byte, header http.Header, raw []byte, maxSize int64) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxBodySize
	}
	codings, unsupported, tooMany := contentCodings(header, DefaultMaxEncodings)
	switch {
	case tooMany:
		return dst[:0], fmt.Errorf("%w: %q (at most %d)", ErrTooManyEncodings, unsupported, DefaultMaxEncodings)
	case unsupported != "":
		return dst[:0], fmt.Errorf("fetch: content coding %q has no decoder", unsupported)
	case len(codings) == 0:
		if int64(len(raw)) > maxSize {
			return raw[:maxSize], ErrBodyTooLarge
		}
		return raw, nil
	}
	if dec := wholeDecoder(codings); dec != nil {
		out, err := decodeWhole(dst[:0], dec, raw, maxSize, DefaultMaxDecodeRatio, false)
		if err != nil && err != ErrBodyTooLarge && err != ErrDecompressionBomb {
			err = fmt.Errorf("fetch: decoding %s: %w", strings.Join(codings, ", "), err)
		}
		return out, err
	}
	in := &recorder{buf: raw} // the whole input has arrived: the ratio is taken against all of it
	var r io.Reader = bytes.NewReader(raw)
	for i := len(codings) - 1; i >= 0; i-- {
		d := &lazyDecoder{src: r, open: decoders[codings[i]]}
		defer d.Close()
		r = d
	}
	guard := &bombGuard{r: r, raw: in, ratio: DefaultMaxDecodeRatio, floor: bombFloor}
	body := &recorder{r: guard, limit: maxSize, limitErr: ErrBodyTooLarge, buf: dst[:0]}
	body.fill(body.limit, true)
	switch {
	case body.over:
		return body.buf, ErrBodyTooLarge
	case errors.Is(body.err, ErrDecompressionBomb):
		return body.buf, ErrDecompressionBomb
	case body.failed():
		return body.buf, fmt.Errorf("fetch: decoding %s: %w", strings.Join(codings, ", "), body.err)
	}
	return body.buf, nil
}

// MediaType returns the media type of a response as Do decides it
// (Result.MediaType): the declared Content-Type's, lower case and without
// parameters, unless it is missing or generic or a text type whose first
// bytes are a binary format's; head is the start of the decoded body (the
// first 512 bytes are looked at).
func MediaType(contentType string, head []byte) string {
	mt, _ := effectiveType(contentType, head[:min(len(head), sniffLen)])
	return mt
}
