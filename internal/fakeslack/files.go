package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// File describes a file hosted by the fake (see AddFile).
type File struct {
	ID, Name, Title, Mimetype, Filetype string
	Size                                int
	URLPrivate, URLPrivateDownload      string // on this host; need "Authorization: Bearer <BotToken>"
	// Set for audio clips recorded in Slack (see AddAudioClip); absent
	// from the JSON when zero.
	Subtype          string // "slack_audio"
	MediaDisplayType string // "audio"
	DurationMs       int
	AudioWaveSamples []int
}

type fileRec struct {
	id, name, title string
	length          int
	data            []byte
	mimetype        string // when set, instead of the one the name suggests
	clip            *File  // the audio clip fields (AddAudioClip)
	uploaded        bool   // data received (upload_url POST or AddFile)
	completed       bool   // completeUploadExternal done (or AddFile)
	user            string
}

// AddFile registers a file a user shares (use it with ShareFile or in a
// SendEvent "files" array via File.JSON). Downloading URLPrivate requires
// "Authorization: Bearer <BotToken>"; without it, like real Slack, the answer
// is 200 with an HTML login page.
func (s *Server) AddFile(id, name string, data []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &fileRec{id: id, name: name, title: name, length: len(data), data: data, uploaded: true, completed: true, user: "U0USER"}
	s.files[id] = f
	return s.file(f)
}

// file converts a record; s.mu must be held.
func (s *Server) file(f *fileRec) File {
	mt := f.mimetype
	if mt == "" {
		mt = mime.TypeByExtension(path.Ext(f.name))
	}
	if mt == "" {
		mt = "application/octet-stream"
	}
	u := fmt.Sprintf("%s/files-pri/%s-%s/", s.URL, s.TeamID, f.id)
	out := File{ID: f.id, Name: f.name, Title: f.title, Mimetype: mt,
		Filetype: strings.TrimPrefix(path.Ext(f.name), "."), Size: len(f.data),
		URLPrivate: u + f.name, URLPrivateDownload: u + "download/" + f.name}
	if c := f.clip; c != nil {
		out.Subtype, out.MediaDisplayType, out.DurationMs, out.AudioWaveSamples = c.Subtype, c.MediaDisplayType, c.DurationMs, c.AudioWaveSamples
	}
	return out
}

// JSON returns the file object as it appears in events and API responses.
func (f File) JSON() map[string]any {
	j := map[string]any{
		"id": f.ID, "name": f.Name, "title": f.Title, "mimetype": f.Mimetype, "filetype": f.Filetype,
		"size": f.Size, "mode": "hosted", "is_external": false, "is_public": false,
		"url_private": f.URLPrivate, "url_private_download": f.URLPrivateDownload,
	}
	if f.Subtype != "" {
		j["subtype"] = f.Subtype
	}
	if f.MediaDisplayType != "" {
		j["media_display_type"] = f.MediaDisplayType
	}
	if f.DurationMs != 0 {
		j["duration_ms"] = f.DurationMs
	}
	if len(f.AudioWaveSamples) > 0 {
		j["audio_wave_samples"] = f.AudioWaveSamples
	}
	return j
}

func (s *Server) fileJSON(f *fileRec) map[string]any {
	if f == nil {
		return map[string]any{}
	}
	j := s.file(f).JSON()
	j["user"] = f.user
	return j
}

func (s *Server) getUploadURL(q *req) (map[string]any, string) {
	name := q.get("filename")
	n, err := strconv.Atoi(q.get("length"))
	if name == "" || err != nil || n <= 0 {
		return nil, "invalid_arguments"
	}
	id := s.newID("F")
	s.files[id] = &fileRec{id: id, name: name, title: name, length: n, user: s.BotUserID}
	return map[string]any{"ok": true, "upload_url": s.URL + "/upload/" + id, "file_id": id}, ""
}

// handleUpload receives the file bytes POSTed to an upload_url (multipart
// field "file" or a raw body).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	status, data := http.StatusOK, []byte(nil)
	var err error
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		var f io.ReadCloser
		if f, _, err = r.FormFile("file"); err == nil {
			data, err = io.ReadAll(f)
			_ = f.Close()
		}
	} else {
		data, err = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	rec := s.files[id]
	auth := r.Header.Get("Authorization")
	switch {
	case r.Method != http.MethodPost:
		status = http.StatusMethodNotAllowed
	case auth != "" && auth != "Bearer "+s.BotToken:
		status = http.StatusUnauthorized
	case rec == nil || rec.completed:
		status = http.StatusNotFound
	case err != nil:
		status = http.StatusBadRequest
	default:
		rec.data, rec.uploaded = data, true
	}
	s.calls = append(s.calls, Call{Method: "upload", Status: status,
		Form: map[string]string{"file_id": id, "length": strconv.Itoa(len(data))}, Time: time.Now()})
	s.bump()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	if status == http.StatusOK {
		_, _ = fmt.Fprintf(w, "OK - %d", len(data))
	} else {
		_, _ = io.WriteString(w, http.StatusText(status))
	}
}

func (s *Server) completeUpload(q *req) (map[string]any, string) {
	var list []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(q.get("files")), &list); err != nil || len(list) == 0 {
		return nil, "invalid_arguments"
	}
	ch := q.get("channel_id")
	if ch == "" {
		ch, _, _ = strings.Cut(q.get("channels"), ",")
	}
	if ch != "" && !s.knownChannel(ch) {
		return nil, "channel_not_found"
	}
	var recs []*fileRec
	for _, it := range list {
		rec := s.files[it.ID]
		if rec == nil || !rec.uploaded || rec.completed {
			q.detail = "file " + it.ID + " was not uploaded to its upload_url"
			return nil, "file_not_found"
		}
		recs = append(recs, rec)
	}
	out := make([]any, len(recs))
	var posted []UploadedFile
	for i, rec := range recs {
		if list[i].Title != "" {
			rec.title = list[i].Title
		}
		rec.completed = true
		out[i] = map[string]any{"id": rec.id, "title": rec.title}
		posted = append(posted, UploadedFile{ID: rec.id, Name: rec.name, Title: rec.title, Data: rec.data})
	}
	if ch != "" {
		m := s.addPosted(Posted{Channel: ch, ThreadTS: q.get("thread_ts"), Text: q.get("initial_comment"), Files: posted})
		q.after = append(q.after, s.echo(m, false))
	}
	return map[string]any{"ok": true, "files": out}, ""
}

func (s *Server) filesInfo(q *req) (map[string]any, string) {
	rec := s.files[q.get("file")]
	if rec == nil || !rec.completed {
		return nil, "file_not_found"
	}
	return map[string]any{"ok": true, "file": s.fileJSON(rec), "content": string(rec.data)}, ""
}

// handleDownload serves url_private / url_private_download.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/")
	teamFile, _, _ := strings.Cut(rest, "/")
	_, id, _ := strings.Cut(teamFile, "-")
	s.mu.Lock()
	rec := s.files[id]
	authed := r.Header.Get("Authorization") == "Bearer "+s.BotToken && s.granted(methodScopes["files-pri"])
	var f File
	var data []byte
	status := http.StatusOK
	switch {
	case !authed:
	case rec == nil || !rec.completed:
		status = http.StatusNotFound
	default:
		f, data = s.file(rec), rec.data
	}
	errCode := ""
	if !authed {
		errCode = "not_authed"
	}
	s.calls = append(s.calls, Call{Method: "files-pri", Status: status, Error: errCode,
		Form: map[string]string{"file_id": id}, Time: time.Now()})
	s.bump()
	s.mu.Unlock()
	switch {
	case !authed: // real Slack answers a login page, not an error status
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>")
	case status != http.StatusOK:
		http.Error(w, "file not found", status)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data)
	}
}
