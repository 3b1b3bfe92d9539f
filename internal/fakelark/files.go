package fakelark

import (
	"fmt"
	"io"
	"net/http"
)

// AddResource serves data at GET /open-apis/im/v1/messages/:messageID/resources/:fileKey.
func (s *Server) AddResource(messageID, fileKey string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resources[messageID+"/"+fileKey] = append([]byte(nil), data...)
}

func (s *Server) uploadFile(rep *reply, r *http.Request, kind string) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		rep.fail(CodeBadUpload, "invalid multipart body: "+err.Error())
		return
	}
	field, typeField, keyName, limit := "image", "image_type", "image_key", maxImageBytes
	okTypes := map[string]bool{"message": true, "avatar": true}
	if kind == "files" {
		field, typeField, keyName, limit = "file", "file_type", "file_key", maxFileBytes
		okTypes = map[string]bool{"opus": true, "mp4": true, "pdf": true, "doc": true, "xls": true, "ppt": true, "stream": true}
	}
	if !okTypes[r.FormValue(typeField)] {
		rep.fail(CodeBadUpload, "invalid "+typeField)
		return
	}
	name := r.FormValue("file_name")
	if kind == "files" && name == "" {
		rep.fail(CodeBadUpload, "file_name is required")
		return
	}
	var data []byte
	if fhs := r.MultipartForm.File[field]; len(fhs) > 0 {
		if f, err := fhs[0].Open(); err == nil {
			data, _ = io.ReadAll(f)
			_ = f.Close()
		}
		if name == "" {
			name = fhs[0].Filename
		}
	} else if v := r.FormValue(field); v != "" {
		data = []byte(v)
	}
	switch {
	case len(data) == 0:
		rep.fail(CodeBadUpload, field+" is required and must not be empty")
	case len(data) > limit:
		rep.fail(codeTooBig, fmt.Sprintf("The file size exceeds the limit (%d bytes).", limit))
	default:
		s.mu.Lock()
		key := fmt.Sprintf("file_v3_fake_%d", s.nextLocked())
		if kind == "images" {
			key = fmt.Sprintf("img_v3_fake_%d", s.seq)
		}
		s.uploads[key] = &upload{name: name, data: data}
		s.mu.Unlock()
		rep.ok(map[string]string{keyName: key})
	}
}

func (s *Server) resource(rep *reply, mid, key, typ string) {
	if typ != "image" && typ != "file" {
		rep.fail(CodeBadUpload, "invalid type: must be image or file")
		return
	}
	s.mu.Lock()
	data, ok := s.resources[mid+"/"+key]
	name := key
	if m := s.msgs[mid]; !ok && m != nil && m.fromBot && (m.ImageKey == key || m.FileKey == key) && s.uploads[key] != nil {
		data, ok, name = s.uploads[key].data, true, s.uploads[key].name
	}
	s.mu.Unlock()
	if !ok {
		rep.fail(CodeResourceGone, "File not in msg.")
		return
	}
	rep.status = http.StatusOK
	rep.w.Header().Set("Content-Type", "application/octet-stream")
	rep.w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	_, _ = rep.w.Write(data)
}
