# SPDX-License-Identifier: MIT
# bash completion for megatune (make install puts it in
# $(PREFIX)/share/bash-completion/completions/megatune).
#
# Nothing is listed here: the words come from the program being completed, as you
# type, so they are always the installed program's (the machine-readable forms of
# its help, cli/opts.h and cli/main.c):
#   megatune --help=complete        the commands (fields separated by tabs)
#   megatune CMD --help=complete    CMD's options: name, value, choices, help; and
#                                   the words its usage names (rules list, ...)
#   megatune --help=models          the bundled models (--model)
#   megatune --help=profiles        the bundled cluster profiles (--cluster ...)
#   megatune probe --list           the probes
# An option's value completes to its choices (bf16 fp8 nvfp4, on off), the bundled
# names (--model, --cluster, --profile, --base) and files where the value is one.

# the words of $1 (white space between them) that begin with $2
# (the arrays take the lines of compgen: SC2207 is meant)
# shellcheck disable=SC2207
_megatune_words()
{
	local IFS=$'\n'
	COMPREPLY+=($(IFS=$' \t\n' compgen -W "$1" -- "$2"))
}

# files (with -d: folders) that begin with $1
# shellcheck disable=SC2207
_megatune_files()
{
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY+=($(compgen "${2:--f}" -- "$1"))
}

_megatune()
{
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd line
	local name meta choices rest table words=''
	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# --opt=value: bash splits it at '=' (COMP_WORDBREAKS)
	if [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	if ((COMP_CWORD == 1)); then
		table=$("$prog" --help=complete 2>/dev/null) || return 0
		_megatune_words "$(printf '%s\n' "$table" | cut -f1)" "$cur"
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	table=$("$prog" "$cmd" --help=complete 2>/dev/null) || return 0

	# the value of an option
	if [[ $prev == --* && $cur != -* ]]; then
		while IFS= read -r line; do
			# the fields by hand: read would merge empty ones (tab is white space)
			name=${line%%$'\t'*} rest=${line#*$'\t'}
			[[ $name == "$prev" ]] || continue
			meta=${rest%%$'\t'*} rest=${rest#*$'\t'}
			choices=${rest%%$'\t'*}
			[[ -n $meta ]] || break # a flag
			case $name in
			--model) _megatune_words "$("$prog" --help=models 2>/dev/null)" "$cur" ;;
			--cluster | --profile | --base)
				_megatune_words "$("$prog" --help=profiles 2>/dev/null)" "$cur" ;;
			esac
			if [[ -n $choices ]]; then
				_megatune_words "$choices" "$cur"
			elif [[ $meta =~ ^[a-z0-9_+-]+(\|[a-z0-9_+-]+)+$ ]]; then
				_megatune_words "${meta//|/ }" "$cur" # on|off, none|selective|full
			elif [[ $meta == *DIR* ]]; then
				_megatune_files "$cur" -d
			elif [[ $meta =~ FILE|PATH|DB|LOG|TRACE|\. ]]; then
				_megatune_files "$cur"
			fi
			return 0
		done <<<"$table"
	fi
	if [[ $cur == -* ]]; then
		_megatune_words "$(printf '%s\n' "$table" | cut -f1 | grep '^-')" "$cur"
		return 0
	fi
	# right after the command: its words (rules list, import nccl-tests, a probe)
	if ((COMP_CWORD == 2)); then
		words=$(printf '%s\n' "$table" | cut -f1 | grep -v '^-')
		[[ $cmd == probe ]] && words=$("$prog" probe --list 2>/dev/null)
	fi
	if [[ -n $words ]]; then
		_megatune_words "$words" "$cur"
	else
		_megatune_files "$cur" # operands: traces, documents, files to add
	fi
	return 0
}

complete -F _megatune megatune
