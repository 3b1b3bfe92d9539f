package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/deerflow/deerflow/tools"
)

// maxImage caps what view_image attaches.
const maxImage = 5 << 20

type imageArgs struct {
	Path string `json:"path" desc:"Virtual path of the image (PNG, JPEG, GIF or WebP), e.g. /mnt/user-data/uploads/photo.jpg."`
}

// visual is view_image: offered only to models that see images.
type visual struct{ tools.Tool }

func (visual) NeedsVision() bool { return true }

func (m *Manager) viewImageTool() tools.Tool {
	return visual{tool(m, "view_image",
		"Look at an image file from the workspace, uploads or outputs: it is shown to you with your next step (and not kept in the conversation afterwards). PNG, JPEG, GIF or WebP, up to 5 MB.",
		func(ctx context.Context, t *thread, in imageArgs) (string, error) {
			attach := tools.EnvFrom(ctx).Attach
			if attach == nil {
				return "", errors.New("this model cannot see images")
			}
			l, err := t.resolve(in.Path)
			if err != nil {
				return "", err
			}
			f, st, err := l.files().OpenFile()
			if err != nil {
				return "", err
			}
			defer f.Close()
			if st.Size() > maxImage {
				return "", fmt.Errorf("%s is %d MB; images up to %d MB can be viewed", l.path, st.Size()>>20, maxImage>>20)
			}
			data, err := io.ReadAll(io.LimitReader(f, maxImage+1))
			if err != nil {
				return "", l.fail(err)
			}
			mime := http.DetectContentType(data)
			switch mime {
			case "image/png", "image/jpeg", "image/gif", "image/webp":
			default:
				return "", fmt.Errorf("%s is not a PNG, JPEG, GIF or WebP image (it looks like %s)", l.path, mime)
			}
			attach(mime, data)
			return fmt.Sprintf("Attached %s (%s, %d KB); you will see it with your next step.", l.path, mime, (len(data)+1023)/1024), nil
		})}
}
