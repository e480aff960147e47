/* trainer.c: a training loop that reads a batch through a NULL pointer on
 * its third step (SIGSEGV). The e2e tests crash it into real cores. */
#include <stdio.h>
#include <stdlib.h>

struct batch {
	int size;
	float *data;
};

static struct batch *batches[4];

__attribute__((noinline)) float load_batch(struct batch *b)
{
	return b->data[0] * (float)b->size; /* CRASH: b is NULL on step 2 */
}

__attribute__((noinline)) float train_step(int step)
{
	return load_batch(batches[step]);
}

int main(void)
{
	static float data[1] = {1.0f};
	static struct batch b0 = {1, data}, b1 = {2, data};
	batches[0] = &b0;
	batches[1] = &b1;
	float loss = 0;
	for (int step = 0; step < 4; step++)
		loss += train_step(step);
	printf("%f\n", loss);
	return 0;
}
