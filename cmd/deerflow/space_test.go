package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/store/storetest"
)

// TestFullDiskIsReportedAndRecovers: deerflow's data dir on a small tmpfs
// (root only; skipped elsewhere). Filled up, /healthz is 503 naming the
// disk, and a message sent meanwhile is not lost: once space returns,
// /healthz is 200 again and the message is answered.
func TestFullDiskIsReportedAndRecovers(t *testing.T) {
	dir := storetest.Tmpfs(t, "64m")
	tg, model, addr := newTelegram(t), echoModel(t), freeAddr(t)
	data := filepath.Join(dir, "data")
	run := startLogged(t, model, data, &faultLog{}, telegramOn(tg), func(c *config.Config) { c.HTTP.Listen = addr })
	srv, err := startOps(run.app, nil) // the harness starts no /healthz
	if err != nil {
		t.Fatal(err)
	}
	defer stopOps(srv)
	tg.PushMessage(faketelegram.Private(ann, "first"))
	waitAnswer(t, tg, ann.ID, "reply to first")

	filler := storetest.Fill(t, dir)
	tg.PushMessage(faketelegram.Private(ann, "second"))
	_, _, body := waitHealth(t, addr, "503 for a full disk", func(code int, h health) bool { return code == 503 && !h.Store.OK })
	if !strings.Contains(body, "the disk holding "+data+" is full") {
		t.Errorf("/healthz does not name the full disk:\n%s", body)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, addr, "200 once space returned", func(code int, h health) bool { return code == 200 })
	waitAnswer(t, tg, ann.ID, "reply to second")
}
