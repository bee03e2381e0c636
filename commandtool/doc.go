// Package commandtool implements the `antler:command` config tool: a tool
// whose every call runs a command, so that users can add tools without
// compiling Go.
//
// The call's arguments are written as one JSON object to the command's
// stdin; its stdout is the result, either plain text or a JSON object
// {"content": "..." | [blocks], "is_error": bool}. A non-zero exit, a
// timeout or output over the cap is an error result the model can read.
//
//	tools:
//	  - name: word_count
//	    group: text
//	    use: antler:command
//	    command: ["python3", "scripts/wc.py"]
//	    description: Count the words of a text.
//	    input_schema:
//	      type: object
//	      properties: {text: {type: string}}
//	      required: [text]
//	    timeout: 10          # seconds (default 60)
//	    env: {LANG: C.UTF-8}
package commandtool
