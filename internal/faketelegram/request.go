package faketelegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxBody bounds a request: a 50 MB document plus the other fields.
const maxBody = 51 << 20

// request is a call's parameters, however they were sent: query string,
// multipart/form-data, x-www-form-urlencoded or a JSON object.
type request struct {
	params map[string]string
	parts  []FilePart
}

func (q *request) str(name string) string { return q.params[name] }

func (q *request) has(name string) bool {
	_, ok := q.params[name]
	return ok
}

// int parses an integer parameter; absent or malformed gives 0, false.
func (q *request) int(name string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(q.params[name]), 10, 64)
	return n, err == nil
}

// bool parses a Boolean parameter the way the API does.
func (q *request) bool(name string) bool {
	v := strings.ToLower(q.params[name])
	return v == "true" || v == "1"
}

// file returns the file part for an InputFile parameter: the part named
// after the parameter, or the one its "attach://<name>" value names.
func (q *request) file(name string) *FilePart {
	if v, ok := strings.CutPrefix(q.params[name], "attach://"); ok {
		name = v
	}
	for i := range q.parts {
		if q.parts[i].Field == name {
			return &q.parts[i]
		}
	}
	return nil
}

// parseRequest reads the parameters. The request is usable even when an
// error is returned.
func parseRequest(w http.ResponseWriter, r *http.Request) (*request, *apiError) {
	q := &request{params: map[string]string{}}
	for k, v := range r.URL.Query() {
		q.params[k] = v[0]
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	switch ct {
	case "multipart/form-data":
		err = q.multipart(r)
	case "application/x-www-form-urlencoded":
		if err = r.ParseForm(); err == nil {
			for k, v := range r.PostForm {
				q.params[k] = v[0]
			}
		}
	case "application/json":
		err = q.json(r)
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return q, &apiError{code: 413, desc: "Request Entity Too Large"}
	case err != nil:
		return q, badRequest("can't parse request: %v", err)
	}
	return q, nil
}

func (q *request) multipart(r *http.Request) error {
	err := r.ParseMultipartForm(maxBody)
	if errors.Is(err, io.EOF) {
		return nil // no fields at all: the client sends getMe like this
	}
	if err != nil {
		return err
	}
	defer func() { _ = r.MultipartForm.RemoveAll() }()
	for k, v := range r.MultipartForm.Value {
		q.params[k] = v[0]
	}
	for field, fhs := range r.MultipartForm.File {
		fh := fhs[0]
		f, err := fh.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			return err
		}
		q.parts = append(q.parts, FilePart{Field: field, Filename: fh.Filename, Data: data})
	}
	slices.SortFunc(q.parts, func(a, b FilePart) int { return strings.Compare(a.Field, b.Field) })
	return nil
}

func (q *request) json(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return err
	}
	for k, raw := range obj {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			q.params[k] = s
		} else {
			q.params[k] = string(raw)
		}
	}
	return nil
}
