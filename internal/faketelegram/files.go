package faketelegram

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // photo formats the fake understands
	_ "image/jpeg"
	_ "image/png"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

const (
	maxDocument = 50 << 20 // upload limit for documents
	maxPhoto    = 10 << 20 // upload limit for photos
	maxDownload = 20 << 20 // getFile limit
)

// file is a file the fake stores: uploaded by the bot or added by the test.
type file struct {
	id, uniqueID, path, name string
	data                     []byte
	sizes                    []PhotoSize // when sent as a photo
}

// newFile stores data; s.mu must be held.
func (s *Server) newFile(data []byte, id, dir, ext string) *file {
	s.nFiles++
	if id == "" {
		id = fmt.Sprintf("BQACfake%s%d", strings.TrimSuffix(dir, "s"), s.nFiles)
	}
	f := &file{id: id, uniqueID: fmt.Sprintf("AQADfake%d", s.nFiles), data: data,
		path: fmt.Sprintf("%s/file_%d%s", dir, s.nFiles, ext)}
	s.files[f.id] = f
	s.paths[f.path] = f
	return f
}

// AddFile stores a file a user sent (put its fileID in a pushed message's
// Document or Photo) for getFile and download, and returns its file_path.
func (s *Server) AddFile(fileID string, data []byte) (filePath string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[fileID]; f != nil {
		delete(s.paths, f.path)
	}
	return s.newFile(data, fileID, "documents", "").path
}

// inputFile resolves an InputFile parameter: an uploaded part, a known
// file_id, or (refused) an HTTP URL.
func (s *Server) inputFile(q *request, field string) (data []byte, name string, f *file, e *apiError) {
	if p := q.file(field); p != nil {
		if len(p.Data) == 0 {
			return nil, "", nil, badRequest("file must be non-empty")
		}
		return p.Data, p.Filename, nil, nil
	}
	v := q.str(field)
	switch {
	case v == "" || strings.HasPrefix(v, "attach://"):
		return nil, "", nil, badRequest("there is no %s in the request", field)
	case strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://"):
		return nil, "", nil, badRequest("failed to get HTTP URL content") // the fake fetches nothing
	case s.files[v] != nil:
		f = s.files[v]
		return f.data, f.name, f, nil
	}
	return nil, "", nil, badRequest("wrong file identifier/HTTP URL specified")
}

// caption formats the caption parameter into m.
func caption(q *request, m *Message, sm *SentMessage) *apiError {
	text, ents, e := formatText(q.str("caption"), q.str("parse_mode"), q.str("caption_entities"), "caption")
	m.Caption, m.CaptionEntities = text, ents
	sm.Text, sm.ParseMode, sm.PlainText, sm.Entities = q.str("caption"), q.str("parse_mode"), text, ents
	return e
}

func (s *Server) sendDocument(q *request) (any, *apiError) {
	cs, m, e := s.outgoing(q)
	if e != nil {
		return nil, e
	}
	data, name, f, e := s.inputFile(q, "document")
	if e != nil {
		return nil, e
	}
	sm := &SentMessage{}
	if e := caption(q, m, sm); e != nil {
		return nil, e
	}
	if f == nil {
		if len(data) > maxDocument {
			return nil, &apiError{code: 413, desc: "Request Entity Too Large"}
		}
		f = s.newFile(data, "", "documents", path.Ext(name))
		f.name = name
	}
	mt, _, _ := mime.ParseMediaType(mime.TypeByExtension(path.Ext(f.name)))
	m.Document = &Document{FileID: f.id, FileUniqueID: f.uniqueID, FileName: f.name, MimeType: mt, FileSize: len(f.data)}
	sm.Document = &SentFile{FileID: f.id, Filename: f.name, Data: f.data}
	return cs.commit(m, sm), nil
}

func (s *Server) sendPhoto(q *request) (any, *apiError) {
	cs, m, e := s.outgoing(q)
	if e != nil {
		return nil, e
	}
	data, name, f, e := s.inputFile(q, "photo")
	if e != nil {
		return nil, e
	}
	sm := &SentMessage{}
	if e := caption(q, m, sm); e != nil {
		return nil, e
	}
	if f == nil || f.sizes == nil {
		if len(data) > maxPhoto {
			return nil, badRequest("PHOTO_SAVE_FILE_INVALID")
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data)) // PNG, JPEG, GIF
		w, h := cfg.Width, cfg.Height
		switch {
		case err != nil || w == 0 || h == 0:
			return nil, badRequest("IMAGE_PROCESS_FAILED")
		case w+h > 10000 || w > 20*h || h > 20*w:
			return nil, badRequest("PHOTO_INVALID_DIMENSIONS")
		}
		if f == nil {
			f = s.newFile(data, "", "photos", ".jpg")
			f.name = name
		}
		f.sizes = s.photoSizes(f, w, h)
	}
	m.Photo = f.sizes
	sm.Photo = &SentFile{FileID: f.id, Filename: name, Data: f.data}
	return cs.commit(m, sm), nil
}

// photoSizes lists the sizes Telegram makes of a w×h photo: thumbnails
// (all serving the original bytes, under their own file_id) and the photo
// itself, at most 1280 pixels on its longer side.
func (s *Server) photoSizes(f *file, w, h int) []PhotoSize {
	var out []PhotoSize
	side := max(w, h)
	limits := []int{90, 320, 800, 1280}
	for i, limit := range limits {
		if side <= limit {
			return append(out, PhotoSize{FileID: f.id, FileUniqueID: f.uniqueID, Width: w, Height: h, FileSize: len(f.data)})
		}
		id, uid := f.id, f.uniqueID // the 1280 size is the photo itself
		if i < len(limits)-1 {
			t := s.newFile(f.data, "", "photos", ".jpg")
			id, uid = t.id, t.uniqueID
		}
		out = append(out, PhotoSize{FileID: id, FileUniqueID: uid,
			Width: max(1, w*limit/side), Height: max(1, h*limit/side), FileSize: len(f.data)})
	}
	return out
}

func (s *Server) getFile(q *request) (any, *apiError) {
	f := s.files[q.str("file_id")]
	switch {
	case f == nil:
		return nil, badRequest("invalid file_id")
	case len(f.data) > maxDownload:
		return nil, badRequest("file is too big")
	}
	return File{FileID: f.id, FileUniqueID: f.uniqueID, FileSize: len(f.data), FilePath: f.path}, nil
}

// download serves GET /file/bot<token>/<file_path>.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	token, p, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/file/bot"), "/")
	s.mu.Lock()
	f := s.paths[p]
	s.mu.Unlock()
	if token != s.Token || f == nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeAnswer(w, nil, &apiError{code: 404, desc: "Not Found"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.data))
}
