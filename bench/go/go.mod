module gort.dev/benchtwin

go 1.19
