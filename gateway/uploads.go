package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/antlerhq/antler/vpath"
)

// multipartOverhead is what a multipart body may carry beyond the files'
// bytes (boundaries, part headers).
const multipartOverhead = 1 << 20

// tempPrefix names upload files being written; such names are refused as
// upload names.
const tempPrefix = ".upload-"

// uploadedFile is one file of an upload answer.
type uploadedFile struct {
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	Path        string `json:"path"`
	VirtualPath string `json:"virtual_path"`
	ArtifactURL string `json:"artifact_url"`
	Extension   string `json:"extension,omitempty"`
	Modified    int64  `json:"modified,omitempty"`
}

func fileInfo(threadID, name string, size, modified int64) uploadedFile {
	virtual := vpath.Uploads + "/" + name
	return uploadedFile{Filename: name, Size: size, Path: virtual, VirtualPath: virtual,
		ArtifactURL: artifactURL(threadID, virtual), Extension: strings.ToLower(path.Ext(name)), Modified: modified}
}

// cleanUploadName reduces a client file name to its last path element and
// refuses names that cannot be one safe file name.
func cleanUploadName(raw string) (string, error) {
	name := raw
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "", name == ".", name == "..":
		return "", fmt.Errorf("invalid file name %q", raw)
	case len(name) > 255:
		return "", fmt.Errorf("file name %q is longer than 255 bytes", raw)
	case strings.HasPrefix(name, tempPrefix):
		return "", fmt.Errorf("invalid file name %q", raw)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", fmt.Errorf("file name %q has control characters", raw)
	}
	return name, nil
}

// upload is POST /api/threads/{tid}/uploads: multipart, one "files" part
// per file. The thread is created when it does not exist yet (a new chat
// uploads before its first run). Limits come from config's uploads
// section; a request that breaks one is refused whole with 413 and writes
// nothing. Each file is written to a temporary file, synced, and renamed
// into place once all of them have arrived.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, u *principal) {
	tid := r.PathValue("tid")
	if !vpath.ValidID(tid) {
		writeError(w, http.StatusUnprocessableEntity, "Invalid thread id %q", tid)
		return
	}
	if _, status := s.threadForRun(r.Context(), u, tid, "", true); status != 0 {
		writeError(w, status, "Thread %s not found", tid)
		return
	}
	lim := s.cfg.Uploads
	r.Body = http.MaxBytesReader(w, r.Body, lim.MaxTotalSize+multipartOverhead)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "Expected a multipart/form-data body with \"files\" parts")
		return
	}
	tp, err := s.layout.EnsureThreadDirs(u.ID, tid)
	if err != nil {
		s.internal(w, "cannot create the thread's folders", err)
		return
	}
	type staged struct {
		name, tmp string
		size      int64
	}
	var files []staged
	committed := false
	defer func() {
		if !committed {
			for _, f := range files {
				_ = os.Remove(f.tmp)
			}
		}
	}()
	var total int64
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, "Upload is larger than %d bytes in total", lim.MaxTotalSize)
			} else {
				writeError(w, http.StatusBadRequest, "Malformed multipart body: %v", err)
			}
			return
		}
		if (part.FormName() != "files" && part.FormName() != "file") || part.FileName() == "" {
			part.Close()
			continue
		}
		name, err := cleanUploadName(part.FileName())
		if err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
		if len(files) >= lim.MaxFiles {
			writeError(w, http.StatusRequestEntityTooLarge, "Too many files: at most %d per upload", lim.MaxFiles)
			return
		}
		tmp, err := os.CreateTemp(tp.Uploads, tempPrefix+"*")
		if err != nil {
			s.internal(w, "cannot store the upload", err)
			return
		}
		files = append(files, staged{name: name, tmp: tmp.Name()})
		n, err := io.Copy(tmp, io.LimitReader(part, lim.MaxFileSize+1))
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		files[len(files)-1].size = n
		total += n
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig) || total > lim.MaxTotalSize:
			writeError(w, http.StatusRequestEntityTooLarge, "Upload is larger than %d bytes in total", lim.MaxTotalSize)
			return
		case err != nil:
			writeError(w, http.StatusBadRequest, "Cannot read %s: %v", name, err)
			return
		case n > lim.MaxFileSize:
			writeError(w, http.StatusRequestEntityTooLarge, "File %s is larger than %d bytes", name, lim.MaxFileSize)
			return
		}
	}
	if len(files) == 0 {
		writeError(w, http.StatusBadRequest, "No files uploaded")
		return
	}
	out := make([]uploadedFile, 0, len(files))
	for _, f := range files {
		dst := filepath.Join(tp.Uploads, f.name)
		if err := os.Rename(f.tmp, dst); err != nil {
			s.internal(w, "cannot store the upload", err)
			return
		}
		info := fileInfo(tid, f.name, f.size, 0)
		if st, err := os.Stat(dst); err == nil {
			info.Modified = st.ModTime().Unix()
		}
		out = slices.DeleteFunc(out, func(o uploadedFile) bool { return o.Filename == f.name })
		out = append(out, info)
	}
	committed = true
	syncDir(tp.Uploads)
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "files": out,
		"message": fmt.Sprintf("Successfully uploaded %d file(s)", len(out)), "skipped_files": []string{}})
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// uploadLimits is GET /api/threads/{tid}/uploads/limits.
func (s *Server) uploadLimits(w http.ResponseWriter, _ *http.Request, _ *principal) {
	lim := s.cfg.Uploads
	writeJSON(w, http.StatusOK, map[string]any{"max_files": lim.MaxFiles, "max_file_size": lim.MaxFileSize,
		"max_total_size": lim.MaxTotalSize})
}

// listUploads is GET /api/threads/{tid}/uploads/list.
func (s *Server) listUploads(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	out := []uploadedFile{}
	if tp, err := s.layout.ThreadPaths(u.ID, th.ID); err == nil {
		entries, _ := os.ReadDir(tp.Uploads)
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), tempPrefix) {
				continue
			}
			if info, err := e.Info(); err == nil {
				out = append(out, fileInfo(th.ID, e.Name(), info.Size(), info.ModTime().Unix()))
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out, "count": len(out)})
}

// deleteUpload is DELETE /api/threads/{tid}/uploads/{filename}.
func (s *Server) deleteUpload(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	name, err := cleanUploadName(r.PathValue("filename"))
	if err != nil || name != r.PathValue("filename") {
		writeError(w, http.StatusNotFound, "File not found")
		return
	}
	tp, err := s.layout.ThreadPaths(u.ID, th.ID)
	if err != nil {
		writeError(w, http.StatusNotFound, "File not found")
		return
	}
	p := filepath.Join(tp.Uploads, name)
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "File %s not found", name)
		return
	}
	if err := os.Remove(p); err != nil {
		s.internal(w, "cannot delete the file", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Deleted " + name})
}
