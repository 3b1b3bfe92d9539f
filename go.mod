module github.com/deerflow/deerflow

go 1.26.0

require (
	github.com/sashabaranov/go-openai v1.43.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
