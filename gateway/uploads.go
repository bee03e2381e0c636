package gateway

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/vpath"
)

// multipartOverhead is what a multipart body may carry beyond the files'
// bytes (boundaries, part headers).
const multipartOverhead = 1 << 20

// tempPrefix names upload files being written; such names are refused as
// upload names.
const tempPrefix = ".upload-"

// staleTempAge is how old (by modification time) a tempPrefix file must be
// before the uploads routes delete it as left behind by a crash: six times
// readTimeout, the longest a request (and so an upload in flight, in this
// process or a replica sharing the folder) can take.
const staleTempAge = 6 * readTimeout

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
// into place once all of them have arrived. Every file operation goes
// through the thread's folder opened as an os.Root, so a symlinked uploads
// folder is refused (403) instead of written through.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, u *principal) {
	fileHeaders(w)
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
	d, dir, err := s.openUploads(u.ID, tid, true)
	if err != nil {
		s.threadFileError(w, tid, "store the upload", err)
		return
	}
	defer d.Close()
	s.reclaimTemps(d, dir)
	st := &stagedUpload{d: d, dir: dir}
	defer st.discard()
	if !s.stageParts(w, mr, st) {
		return
	}
	if len(st.files) == 0 {
		writeError(w, http.StatusBadRequest, "No files uploaded")
		return
	}
	out := make([]uploadedFile, 0, len(st.files))
	for _, f := range st.files {
		dst := filepath.Join(dir, f.name)
		if err := d.root.Rename(f.tmp, dst); err != nil {
			s.threadFileError(w, tid, "store the upload", rootError(err))
			return
		}
		info := fileInfo(tid, f.name, f.size, 0)
		if fi, err := d.root.Lstat(dst); err == nil {
			info.Modified = fi.ModTime().Unix()
		}
		out = slices.DeleteFunc(out, func(o uploadedFile) bool { return o.Filename == f.name })
		out = append(out, info)
	}
	st.committed = true
	if f, err := d.root.Open(dir); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "files": out,
		"message": fmt.Sprintf("Successfully uploaded %d file(s)", len(out)), "skipped_files": []string{}})
}

// stagedUpload is the temporary files of one upload request.
type stagedUpload struct {
	d         *threadDir
	dir       string // the uploads folder, relative to d's root
	files     []stagedFile
	total     int64
	committed bool
}

type stagedFile struct {
	name, tmp string // tmp is relative to the root
	size      int64
}

// discard removes the temporary files unless they were committed.
func (st *stagedUpload) discard() {
	if st.committed {
		return
	}
	for _, f := range st.files {
		_ = st.d.root.Remove(f.tmp)
	}
}

// stageParts writes every file part of mr to a temporary file in st. It
// answers a refused request itself and returns false.
func (s *Server) stageParts(w http.ResponseWriter, mr *multipart.Reader, st *stagedUpload) bool {
	lim := s.cfg.Uploads
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, "Upload is larger than %d bytes in total", lim.MaxTotalSize)
			} else {
				writeError(w, http.StatusBadRequest, "Malformed multipart body: %v", err)
			}
			return false
		}
		if (part.FormName() != "files" && part.FormName() != "file") || part.FileName() == "" {
			part.Close()
			continue
		}
		name, err := cleanUploadName(part.FileName())
		if err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return false
		}
		if len(st.files) >= lim.MaxFiles {
			writeError(w, http.StatusRequestEntityTooLarge, "Too many files: at most %d per upload", lim.MaxFiles)
			return false
		}
		tmpName := filepath.Join(st.dir, tempPrefix+uuid.NewString())
		tmp, err := st.d.root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			s.threadFileError(w, st.d.threadID, "store the upload", rootError(err))
			return false
		}
		st.files = append(st.files, stagedFile{name: name, tmp: tmpName})
		n, err := io.Copy(tmp, io.LimitReader(part, lim.MaxFileSize+1))
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		st.files[len(st.files)-1].size = n
		st.total += n
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig) || st.total > lim.MaxTotalSize:
			writeError(w, http.StatusRequestEntityTooLarge, "Upload is larger than %d bytes in total", lim.MaxTotalSize)
			return false
		case err != nil:
			writeError(w, http.StatusBadRequest, "Cannot read %s: %v", name, err)
			return false
		case n > lim.MaxFileSize:
			writeError(w, http.StatusRequestEntityTooLarge, "File %s is larger than %d bytes", name, lim.MaxFileSize)
			return false
		}
	}
}

// reclaimTemps deletes the tempPrefix files in the uploads folder dir that
// are older than staleTempAge: what a crash, or a failed rename whose
// cleanup failed too, left behind. Failures are logged and ignored.
func (s *Server) reclaimTemps(d *threadDir, dir string) {
	f, err := d.root.Open(dir)
	if err != nil {
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-staleTempAge)
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if fi, err := e.Info(); err != nil || !fi.ModTime().Before(cutoff) {
			continue
		}
		if err := d.root.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logger.Warn("cannot remove a stale upload temp file", "thread_id", d.threadID, "file", e.Name(), "err", err)
		}
	}
}

// threadFileError answers a failed thread file operation: 403 naming the
// problem (and a log line) when a path or symlink would leave the
// thread's folder, 500 otherwise.
func (s *Server) threadFileError(w http.ResponseWriter, threadID, what string, err error) {
	if errors.Is(err, errOutsideThread) {
		s.logger.Warn("thread file operation refused", "thread_id", threadID, "op", what, "err", err)
		writeError(w, http.StatusForbidden, "Cannot %s: %v", what, err)
		return
	}
	s.internal(w, "cannot "+what, err)
}

// uploadLimits is GET /api/threads/{tid}/uploads/limits.
func (s *Server) uploadLimits(w http.ResponseWriter, _ *http.Request, _ *principal) {
	fileHeaders(w)
	lim := s.cfg.Uploads
	writeJSON(w, http.StatusOK, map[string]any{"max_files": lim.MaxFiles, "max_file_size": lim.MaxFileSize,
		"max_total_size": lim.MaxTotalSize})
}

// listUploads is GET /api/threads/{tid}/uploads/list: the regular files
// of the uploads folder (symlinks and temporary files are not listed). It
// also reclaims stale temporary files (reclaimTemps).
func (s *Server) listUploads(w http.ResponseWriter, r *http.Request, u *principal) {
	fileHeaders(w)
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	out := []uploadedFile{}
	d, dir, err := s.openUploads(u.ID, th.ID, false)
	if errors.Is(err, fs.ErrNotExist) {
		writeJSON(w, http.StatusOK, map[string]any{"files": out, "count": 0})
		return
	}
	if err != nil {
		s.threadFileError(w, th.ID, "list the uploads", err)
		return
	}
	defer d.Close()
	s.reclaimTemps(d, dir)
	f, err := d.root.Open(dir)
	if err != nil {
		s.threadFileError(w, th.ID, "list the uploads", rootError(err))
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		s.threadFileError(w, th.ID, "list the uploads", err)
		return
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil {
			out = append(out, fileInfo(th.ID, e.Name(), info.Size(), info.ModTime().Unix()))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out, "count": len(out)})
}

// deleteUpload is DELETE /api/threads/{tid}/uploads/{filename}: only a
// regular file directly in the uploads folder (a symlink is not found).
func (s *Server) deleteUpload(w http.ResponseWriter, r *http.Request, u *principal) {
	fileHeaders(w)
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	name, err := cleanUploadName(r.PathValue("filename"))
	if err != nil || name != r.PathValue("filename") {
		writeError(w, http.StatusNotFound, "File not found")
		return
	}
	d, dir, err := s.openUploads(u.ID, th.ID, false)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, "File %s not found", name)
		return
	}
	if err != nil {
		s.threadFileError(w, th.ID, "delete the file", err)
		return
	}
	defer d.Close()
	p := filepath.Join(dir, name)
	if fi, err := d.root.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "File %s not found", name)
		return
	}
	// Remove never follows a final symlink: if p was swapped for one since
	// the check, the link itself goes, not its target.
	if err := d.root.Remove(p); err != nil {
		s.threadFileError(w, th.ID, "delete the file", rootError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Deleted " + name})
}
