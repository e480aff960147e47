! grid: a Fortran program writing through an unassociated pointer; libgfortran's
! handler prints a backtrace, re-raises SIGSEGV and returns.
module grid
  implicit none
contains
  subroutine fill_row(a, n, row)
    integer, intent(in) :: n, row
    real, pointer :: a(:)
    integer :: i
    do i = 1, n
      a(i) = real(row * i)
    end do
  end subroutine fill_row
end module grid

program main
  use grid
  implicit none
  real, pointer :: a(:)
  nullify(a)
  call fill_row(a, 4, 2)
  print *, 'done'
end program main
