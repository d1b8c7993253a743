module sless.local/runtime

go 1.23
