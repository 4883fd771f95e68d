/* nofde.S - a function with no CFI (so no FDE in .eh_frame) whose %rbp
 * is no frame pointer: spin_nofde(n) spins n times with %rbp pointing
 * below the stack pointer. perf's libunwind, finding no FDE, tries %rbp
 * and drops it (below the frame), so its walk ends at this frame;
 * libdwfl's frame-pointer guess would read on (x86-64; the test builds
 * it only there). */
	.text
	.globl	spin_nofde
	.type	spin_nofde, @function
spin_nofde:
	push	%rbp
	lea	-64(%rsp), %rbp
1:	test	%rdi, %rdi
	jz	2f
	dec	%rdi
	jmp	1b
2:	pop	%rbp
	ret
	.size	spin_nofde, .-spin_nofde
	.section	.note.GNU-stack,"",@progbits
