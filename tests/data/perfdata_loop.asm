; SPDX-License-Identifier: BSD-2-Clause
; A program for tests/cli/perfdata_flow.sh: a counted loop that calls one
; of four functions through a table (indirect call), one of which loops,
; one jumps through a pointer (indirect jump) and one calls another; odd
; iterations also call a leaf. Its trace is written by the test (awk ->
; ptgen), branch by branch, from the symbol addresses of the linked file.
%ifndef ITER
%define ITER 40
%endif
	bits 64
	section .text
	global _start:function
	global top:function
	global f0:function
	global f1:function
	global f1_loop:function
	global f2:function
	global f2b:function
	global f3:function
	global odd:function
	global done:function
_start:
	mov r12d, ITER
	lea rbx, [rel table]
top:
	mov eax, r12d
	and eax, 3
	call [rbx + rax * 8]
	test r12d, 1
	jz .even
	call odd
.even:
	dec r12d
	jnz top
	jmp done
f0:
	ret
f1:
	mov ecx, 3
f1_loop:
	dec ecx
	jnz f1_loop
	ret
f2:
	jmp [rel f2ptr]
f2b:
	ret
f3:
	call f1
	ret
odd:
	ret
done:
	mov eax, 60
	syscall
	align 8
table:
	dq f0, f1, f2, f3
f2ptr:
	dq f2b
