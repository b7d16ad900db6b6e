; SPDX-License-Identifier: BSD-2-Clause
; The bundled example: a loop that calls a function that calls another,
; then exits with a system call. `make example` assembles and links it
; (yasm, ld), writes the Intel PT trace that executing it produces from
; calls.ptdesc (tests/tools/ptgen), and decodes that with hwt.
	bits 64
	section .text
	global _start:function (_start.end - _start)
	global work:function (work.end - work)
	global leaf:function (leaf.end - leaf)
	global done:function (done.end - done)
_start:
	mov ecx, 3
.again:
	call work
	dec ecx
	jnz .again
	jmp done
.end:
work:
	push rcx
	call leaf
	test eax, eax
	jz .skip
	add eax, 1
.skip:
	pop rcx
	ret
.end:
leaf:
	xor eax, eax
	ret
.end:
done:
	mov eax, 60
	syscall
.end:
