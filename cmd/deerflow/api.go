package main

import (
	"context"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/api/gateway"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/sandbox"
)

// newAPI builds the HTTP API when http.listen is set (without
// http.api_token it only says that it is off).
func (a *app) newAPI(sb *sandbox.Manager) error {
	// The restart notices of interrupted API runs go nowhere: the API's
	// clients read the run's status. (Registered even with the API off,
	// for runs of an earlier configuration.)
	a.router.Register(apiSink{})
	if a.cfg.HTTP.Listen == "" {
		return nil
	}
	// An upload request may carry a few files of the upload limit each.
	maxUpload := 4*int64(a.cfg.Sandbox.MaxUploadMB)<<20 + 1<<20
	gw := gateway.New(gateway.Options{ // DeerFlow's UI routes beyond LangGraph's
		Config: a.cfg, Files: sb, Intake: a.intake(), Skills: a.skills, Agents: a.agentList,
		Store: a.store, Scheduler: a.scheduler != nil, Logger: a.log, MaxBody: maxUpload,
	})
	s, err := api.New(api.Options{
		Token:  a.cfg.HTTP.APIToken,
		Store:  a.store,
		Agent:  a.agent,
		Runner: a.runner,
		Files: func(threadID, name string) (event.File, error) {
			return sb.Reopen(threadID, sandbox.Outputs+"/"+name)
		},
		RemoveFiles: sb.RemoveThread,
		Schedules:   a.scheduler,
		Agents:      a.agentList,
		Persona:     a.agents.Named,
		Prepare: func(in *agent.Input) {
			in.Persona = plan.Gate(in.Persona, a.plan.On(in.ChatKey))
		},
		CORSOrigins:   a.cfg.HTTP.CORSOrigins,
		TrustLoopback: a.cfg.HTTP.TrustLoopback,
		Routes:        gw.Register, UploadsNote: gw.UploadsNote,
		Uploads: gateway.IsUpload, MaxUpload: maxUpload,
		Logger: a.log,
	})
	if err != nil {
		return err
	}
	a.api = s
	return nil
}

// apiSink is the bus sender of the API's conversations: it drops what the
// router would say there (a restart's notices).
type apiSink struct{}

func (apiSink) Name() string { return "api" }

func (apiSink) Send(context.Context, *bus.Outbound) ([]string, error) { return nil, nil }
