; domains.blocksworld.generator: blocks=5, seed=1, split=val
(define (problem blocksworld-n5-s1-val)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on-table b1)
    (on b2 b5)
    (on b3 b2)
    (on b4 b1)
    (on b5 b4)
    (clear b3)
  )
  (:goal (and
    (on b1 b3)
    (on b3 b2)
    (on b4 b5)
  ))
)
