package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// chatSide drives one fake chat platform for the uploads tests: a person
// sends a file (with a caption where the chatSide has them) and the test
// waits for what the chat shows.
type chatSide struct {
	name string
	run  *serveRun
	send func(name string, data []byte, caption string)
	// voice sends a recorded voice note.
	voice func(ogg []byte)
	// sees waits until a bot message in the person's chat contains want.
	sees func(want string)
}

var fileSeq atomic.Int64

// platforms starts deerflow against each fake chatSide in turn.
func chatSides(t *testing.T, model *fakeopenai.Server, edit ...func(*config.Config)) []func(t *testing.T) *chatSide {
	return []func(t *testing.T) *chatSide{
		func(t *testing.T) *chatSide {
			tg := newTelegram(t)
			p := &chatSide{name: "telegram", run: startTelegram(t, tg, model, t.TempDir(), edit...)}
			p.send = func(name string, data []byte, caption string) {
				id := fmt.Sprintf("doc-%d", fileSeq.Add(1))
				tg.AddFile(id, data)
				msg := faketelegram.Private(ann, "")
				msg.Caption = caption
				msg.Document = &faketelegram.Document{FileID: id, FileUniqueID: "u" + id, FileName: name, FileSize: len(data)}
				tg.PushMessage(msg)
			}
			p.voice = func(ogg []byte) { tg.PushMessage(tg.WithVoice(faketelegram.Private(ann, ""), ogg, 2)) }
			p.sees = func(want string) { waitMessage(t, tg, ann.ID, want) }
			return p
		},
		func(t *testing.T) *chatSide {
			sl := newSlack(t)
			p := &chatSide{name: "slack", run: startSlack(t, sl, model, t.TempDir(), edit...)}
			p.send = func(name string, data []byte, caption string) {
				f := sl.AddFile(fmt.Sprintf("F%d", fileSeq.Add(1)), name, data)
				sl.ShareFile("D2", "im", "U1", caption, "", f)
			}
			p.voice = func(ogg []byte) {
				clip := sl.AddAudioClip(fmt.Sprintf("FA%d", fileSeq.Add(1)), "audio/webm", "webm", ogg, 2000)
				sl.ShareFile("D2", "im", "U1", "", "", clip)
			}
			p.sees = func(want string) { slackSees(t, sl, "D2", want) }
			return p
		},
		func(t *testing.T) *chatSide {
			lk := fakelark.New(t)
			p := &chatSide{name: "lark", run: startLark(t, lk, model, t.TempDir(), edit...)}
			p.send = func(name string, data []byte, caption string) {
				n := fileSeq.Add(1)
				msgID, key := fmt.Sprintf("om_doc_%d", n), fmt.Sprintf("file_v2_%d", n)
				lk.AddResource(msgID, key, data)
				content, _ := json.Marshal(map[string]string{"file_key": key, "file_name": name})
				// A Lark file message has no caption: the file comes alone.
				lk.Send(fakelark.MessageEvent{MessageID: msgID, ChatID: "oc_d", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "file", Content: string(content)})
			}
			p.voice = func(ogg []byte) {
				lk.SendVoice(fakelark.MessageEvent{ChatID: "oc_d", ChatType: "p2p", SenderOpenID: "ou_ann"}, ogg, 2*time.Second)
			}
			p.sees = func(want string) { larkSees(t, lk, "oc_d", want) }
			return p
		},
	}
}

// slackSees waits until a message in channel shows want, as text or as
// its Markdown block.
func slackSees(t *testing.T, sl *fakeslack.Server, channel, want string) {
	t.Helper()
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages(channel) {
			if strings.Contains(p.Text, want) || strings.Contains(markdownOf(p), want) {
				return true
			}
		}
		return false
	})
}

// larkSees waits until a bot message in chat shows want, as a card or as
// text.
func larkSees(t *testing.T, lk *fakelark.Server, chat, want string) {
	t.Helper()
	lk.WaitFor(func() bool {
		for _, m := range lk.Messages(chat) {
			var text struct{ Text string }
			json.Unmarshal([]byte(m.Content), &text)
			if strings.Contains(cardText(m.Content), want) || strings.Contains(text.Text, want) {
				return true
			}
		}
		return false
	})
}

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "documents", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reader is a model that reads the Markdown version of the upload it is
// told of, then answers with what it read.
func reader(r fakeopenai.Request) fakeopenai.Turn {
	last := r.Last()
	if last.Role == "tool" {
		return fakeopenai.Turn{Text: "I read it.", Chunk: -1}
	}
	for _, f := range strings.Fields(last.Content) {
		if strings.HasSuffix(f, ".md") && strings.HasPrefix(f, "/mnt/user-data/uploads/") {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"` + f + `"}`}}}
		}
	}
	return fakeopenai.Turn{Text: "There is nothing to read.", Chunk: -1}
}

// TestDocumentReachesTheModelAsMarkdown: a Word document made by
// LibreOffice, sent with a question on each chatSide, reaches the model
// as the original's path and its Markdown version's, and read_file of the
// Markdown gives the heading, the list and the table.
func TestDocumentReachesTheModelAsMarkdown(t *testing.T) {
	docx := fixture(t, "office/testdata/report.docx")
	model := fakeopenai.New(t)
	model.Handle(reader)
	for _, start := range chatSides(t, model) {
		p := start(t)
		t.Run(p.name, func(t *testing.T) {
			before := len(model.Requests())
			p.send("report.docx", docx, "what grew?")
			p.sees("I read it.")
			p.run.app.router.WaitIdle(t.Context())
			reqs := model.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			told := reqs[0].Last().Content
			for _, want := range []string{"/mnt/user-data/uploads/report.docx (DOCX", "→ Markdown: /mnt/user-data/uploads/report.docx.md"} {
				if !strings.Contains(told, want) {
					t.Errorf("the model was not told %q:\n%s", want, told)
				}
			}
			if p.name != "lark" && !strings.Contains(told, "what grew?") {
				t.Errorf("the question is missing:\n%s", told)
			}
			md := reqs[1].Last().Content
			for _, want := range []string{"# Quarterly Report", "Revenue up 12%", "| North | 100 | 120 |", "Hire two engineers"} {
				if !strings.Contains(md, want) {
					t.Errorf("read_file of the Markdown lacks %q:\n%s", want, md)
				}
			}
		})
	}
}
